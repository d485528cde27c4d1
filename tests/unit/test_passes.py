"""Issue 36: a plan whose stages read the same data from DRAM again (analysis/diagnosis/passes.py), on
results recorded on an H100 through the kprof CLI (tests/fixtures/h100_passes/, 2026-11-27): the
fourteenth held-back set's two-pass variance and its Welford fix, and mla_decode v3 (two stages, the
combine reading the attend stage's partials once)."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kprof_mcp.analysis.diagnosis import reread_across_stages
from kprof_mcp.analysis.diagnosis.limiter import limiter
from kprof_mcp.analysis.diagnosis.passes import LOAD_PATH
from kprof_mcp.capture.context import data_bytes
from kprof_mcp.models import ProfileResult
from kprof_mcp.render.diagnosis import assess

D = Path(__file__).resolve().parents[1] / "fixtures" / "h100_passes"


def _load(name: str) -> ProfileResult:
    return ProfileResult.model_validate_json((D / f"{name}.result.json").read_text())


def _stages(r: ProfileResult):
    return assess(r).stages


def _share_by_hand(stages, removed) -> float:
    """The what-if recomputed by hand from each stage's uses: ``removed`` the (reads, writes) bytes each stage
    loses. Its DRAM use scales by the bytes left, the levels a load or store crosses by the reads' and stores'
    shares gone, every other use kept; the share of the plan's time saved."""
    T = after = 0.0
    for sa, (e_r, e_w) in zip(stages, removed):
        s, m = sa.stage, sa.metrics
        keep = 1 - (e_r + e_w) / s.dram_bytes
        path = 1 - (e_r / s.dram_read_bytes if s.dram_read_bytes else 0.0) - e_w / s.dram_bytes
        uses = {u.key: u.util for u in limiter(m).uses}
        rest = max(v * (path if k in LOAD_PATH else 1.0) for k, v in uses.items() if k != "dram")
        T += m.time_ns
        after += m.time_ns * max(1 - uses["dram"] * (1 - keep), rest, uses["dram"] * keep)
    return 1 - after / T


def test_two_passes_over_the_data_are_one_read_too_many():
    r = _load("two_pass_var_v0")
    stages = _stages(r)
    o = reread_across_stages(r, stages)
    assert o is not None and o.cause == "over_fetch" and o.specific
    f = o.facts
    assert f.resource == "dram" and f.move == "passes" and f.focus == ("sum", "sqdev")
    S = sum(min(s.dram_read_bytes, r.data_bytes) for s in r.stages)
    assert f.over_fetch_ratio == pytest.approx(S / r.data_bytes) and 1.99 < f.over_fetch_ratio < 2.01
    assert f.value == pytest.approx(S - r.data_bytes)
    E = S - r.data_bytes
    removed = [(E * min(sa.stage.dram_read_bytes, r.data_bytes) / S, 0.0) for sa in stages]
    assert o.share == pytest.approx(_share_by_hand(stages, removed))
    measured = json.loads((D / "measured.json").read_text())["event_mode_total_us"]
    gain = 100 * (measured["calib_two_pass_var_v0_event"] / measured["calib_two_pass_var_v1_event"] - 1)
    assert 90 < gain < 100  # Welford's one pass: 707.9 -> 364.0 us
    assert 0.5 <= o.est_gain_pct / gain <= 2.0 and 80 < o.est_gain_pct < 90  # +84 % for +94.5 %
    # never faster than the data read once at the attainable DRAM rate
    floor = 1e9 * r.data_bytes / (0.9 * r.stages[0].peak_bytes_per_s)
    assert (1 - o.share) * sum(sa.metrics.time_ns for sa in stages) >= floor
    # opportunity 1 of the whole profile, worded as the plan's
    top = assess(r).opportunities[0]
    assert top.stage is None and top.cause == "over_fetch"
    assert top.name.startswith("Read the data once across the stages: fuse the passes")
    assert (
        "the stages read 2.00x the bytes of the version's data from DRAM (1.07 GB read again by sum, sqdev)"
        in (top.trigger)
    )


def test_one_pass_and_a_partials_round_trip_are_no_re_read():
    fixed = _load("two_pass_var_v1")
    assert reread_across_stages(fixed, _stages(fixed)) is None
    assert all(o.cause != "over_fetch" or o.stage for o in assess(fixed).opportunities)
    mla = _load("mla_decode_v3")
    stages = _stages(mla)
    assert reread_across_stages(mla, stages) is None
    # the combine reads the partials the build allocated: counted in the data, they are read once; left out
    # (the package's tensors alone), the same reads would look like a re-read
    partials = 134_217_728.0
    inputs_only = mla.model_copy(update={"data_bytes": mla.data_bytes - partials})
    assert reread_across_stages(inputs_only, _stages(inputs_only)) is not None


def test_what_the_re_read_needs_measured():
    r = _load("two_pass_var_v0")
    stages = _stages(r)
    assert reread_across_stages(r.model_copy(update={"data_bytes": None}), stages) is None  # older results
    assert reread_across_stages(r.model_copy(update={"plan_kind": "concurrent"}), stages) is None
    # a stage without its DRAM read bytes (event mode, or recorded before they were kept)
    no_reads = [replace(sa, stage=sa.stage.model_copy(update={"dram_read_bytes": None})) for sa in stages]
    assert reread_across_stages(r, no_reads) is None
    # data twice as large: each pass reads half of it, no byte twice
    assert reread_across_stages(r.model_copy(update={"data_bytes": 2.2 * r.data_bytes}), stages) is None
    # one stage reading beyond the data is that stage's own over-fetch, not the plan's
    one = r.model_copy(update={"stages": r.stages[:1]})
    assert reread_across_stages(one, _stages(one)) is None


def test_data_bytes_counts_each_storage_once():
    torch = pytest.importorskip("torch")
    x = torch.zeros(1000, dtype=torch.float32)
    y = torch.zeros(10, dtype=torch.float16)
    inputs = {"x": x, "view": x[10:20], "nested": [y, (x.view(10, 100),)], "n": 3, "s": "text"}
    assert data_bytes(inputs) == 4000.0 + 20.0
    assert data_bytes({"n": 1}) is None


def _load_gz(name: str) -> ProfileResult:
    import gzip

    with gzip.open(D / f"{name}.result.json.gz", "rt") as f:
        return ProfileResult.model_validate_json(f.read())


def test_without_counters_the_stage_models_stand_in():
    """Event mode (the default): no DRAM read bytes, so the stages' FLOP/byte models' bytes: each stage loses
    its share of the bytes moved again at the attainable DRAM rate, never under its remaining model."""
    r = _load_gz("two_pass_var_v0_event")
    stages = _stages(r)
    assert not any(s.counters_measured for s in r.stages) and all(s.dram_read_bytes is None for s in r.stages)
    o = reread_across_stages(r, stages)
    assert o is not None and o.facts.source == "model" and o.facts.focus == ("sum", "sqdev")
    Dd = r.data_bytes
    S = sum(min(s.bytes_model, Dd) for s in r.stages)
    E, T, after = S - Dd, 0.0, 0.0
    for sa in stages:
        s = sa.stage
        e = E * min(s.bytes_model, Dd) / S
        T += sa.metrics.time_ns
        after += max(
            sa.metrics.time_ns - 1e9 * e / (0.9 * s.peak_bytes_per_s),
            1e9 * s.flops / s.peak_flops_per_s,
            1e9 * (s.bytes_model - e) / s.peak_bytes_per_s,
        )
    after = max(after, 1e9 * Dd / (0.9 * r.stages[0].peak_bytes_per_s))
    assert o.share == pytest.approx(1 - after / T)
    measured = json.loads((D / "measured.json").read_text())["event_mode_total_us"]
    gain = 100 * (measured["calib_two_pass_var_v0_event"] / measured["calib_two_pass_var_v1_event"] - 1)
    assert 0.5 <= o.est_gain_pct / gain <= 2.0 and 90 < o.est_gain_pct < 105  # +98 % for +94.5 %
    top = assess(r).opportunities[0]
    assert (
        top.stage is None and "the stages' models move 2.00x the bytes of the version's data" in top.trigger
    )
    assert "FLOP/byte models, no counters" in top.trigger
    fixed = _load_gz("two_pass_var_v1_event")
    assert reread_across_stages(fixed, _stages(fixed)) is None
    # a plan mixing stages with and without counters gets nothing of it
    mixed = r.model_copy(
        update={"stages": [r.stages[0].model_copy(update={"dram_pct": 90.0}), *r.stages[1:]]}
    )
    assert mixed.stages[0].counters_measured
    assert reread_across_stages(mixed, _stages(mixed)) is None


H15 = Path(__file__).resolve().parents[1] / "calibration" / "recorded-heldout15"


def test_an_output_filled_then_overwritten_is_written_once():
    """The fifteenth held-back set's zero-filled output (recorded on an H100, 2026-11-27): a fill kernel writes
    256 MB of zeros, then the distance kernel writes every element again. Each stage writes its own bytes once,
    so no stage's what-if sees it; together they write 1.83x the data: the excess is dead stores, each stage
    losing its share in proportion to its writes."""
    pair = H15 / "an_output_zero_filled_before_a_kernel_that_writes_all_of_it"
    r = ProfileResult.model_validate_json((pair / "bad.result.json").read_text())
    stages = _stages(r)
    o = reread_across_stages(r, stages)
    assert o is not None and o.cause == "over_fetch" and o.specific
    f = o.facts
    assert f.move == "rewrites" and f.resource == "dram" and f.focus == ("zero", "dist")
    W = [s.dram_bytes - s.dram_read_bytes for s in r.stages]
    S = sum(min(w, r.data_bytes) for w in W)
    assert f.over_fetch_ratio == pytest.approx(S / r.data_bytes) and 1.8 < f.over_fetch_ratio < 1.9
    assert f.value == pytest.approx(S - r.data_bytes)  # the reads (kB) pass nothing
    E = S - r.data_bytes  # the reads are not above the data: only the stores' share goes
    assert o.share == pytest.approx(_share_by_hand(stages, [(0.0, E * min(w, r.data_bytes) / S) for w in W]))
    measured = json.loads((H15 / "measured.json").read_text())["pairs"]
    gain = measured["an output zero-filled before a kernel that writes all of it"]["measured_gain_pct"]
    assert 0.5 <= o.est_gain_pct / gain <= 2.0 and 55 < o.est_gain_pct < 70  # +61.9 % for +84.5 %
    top = assess(r).opportunities[0]
    assert top.stage is None and top.name.startswith("Write each output once across the stages")
    assert "the stages write 1.83x the bytes of the version's data to DRAM" in top.trigger
    # the fix (the distance kernel alone) writes its output once
    good = ProfileResult.model_validate_json((pair / "good.result.json").read_text())
    assert reread_across_stages(good, _stages(good)) is None


def test_an_in_place_update_reads_and_writes_the_data_once_each():
    """A stage reading D bytes and writing them back (an in-place update) passes neither test: reads and writes
    are weighed apart."""
    r = _load("two_pass_var_v0")
    (s0, s1, s2) = r.stages
    D = r.data_bytes
    rw = r.model_copy(
        update={
            "stages": [
                s0.model_copy(update={"dram_read_bytes": D, "dram_bytes": 2 * D}),
                s1.model_copy(update={"dram_read_bytes": 0.1 * D, "dram_bytes": 0.2 * D}),
                s2,
            ]
        }
    )
    assert reread_across_stages(rw, _stages(rw)) is None
    twice = rw.model_copy(
        update={"stages": [rw.stages[0], s1.model_copy(update={"dram_read_bytes": 0.0, "dram_bytes": D}), s2]}
    )
    o = reread_across_stages(twice, _stages(twice))
    assert o is not None and o.facts.move == "rewrites" and o.facts.over_fetch_ratio == pytest.approx(2.0)


def test_a_workspace_written_and_read_back_is_the_round_trip_to_remove():
    """The fifteenth held-back set's needless split-K, profiled live on an H100 after the workspace was told
    apart (2026-11-27): 8192 programs over K slices of 256 write fp32 partials to a 512 MB workspace that
    make_inputs allocated and the reference never reads, a reduction kernel reads them back. The round trip
    goes in the what-if (the writer loses the scratch's writes, the reader its reads): first, +105.7 %, for
    +326 % measured (event mode, no split: the partial kernel's short K loops go too, which no byte count
    says: an under-estimate)."""
    r = _load("splitk_v0")
    assert r.correctness["reference_reads"] == ["a", "b"]
    P = r.scratch_bytes
    assert P == 8 * 4096 * 4096 * 4  # the workspace: not read by the reference, not the output
    stages = _stages(r)
    o = reread_across_stages(r, stages)
    assert o is not None and o.cause == "over_fetch" and o.facts.move == "scratch"
    assert o.facts.focus == ("partial", "reduce")
    reads = [s.dram_read_bytes for s in r.stages]
    writes = [s.dram_bytes - s.dram_read_bytes for s in r.stages]
    X_w, X_r = min(P, writes[0]), min(P, reads[1])  # written by the first, read back by the second
    assert o.facts.value == pytest.approx(X_w + X_r)
    io = r.data_bytes - P
    assert (
        o.facts.over_fetch_ratio == pytest.approx((sum(reads) + sum(writes)) / io)
        and 18 < o.facts.over_fetch_ratio < 19
    )
    assert o.share == pytest.approx(_share_by_hand(stages, [(0.0, X_w), (X_r, 0.0)]))
    measured = json.loads((D / "measured.json").read_text())["event_mode_total_us"]
    gain = 100 * (measured["calib_needless_splitk_v0_event"] / measured["calib_needless_splitk_v1_event"] - 1)
    assert 300 < gain < 350 and 95 < o.est_gain_pct < 115 < gain
    top = assess(r).opportunities[0]
    assert top.stage is None and top.name.startswith(
        "Keep the intermediate on chip: fuse the stage that writes"
    )
    assert (
        "1.05 GB of them a scratch buffer the result does not need, written and read back by partial, reduce"
        in top.trigger
    )
    # the fix has the same workspace allocated and unused: one stage, no round trip
    fixed = _load("splitk_v1")
    assert fixed.scratch_bytes == P and reread_across_stages(fixed, _stages(fixed)) is None


def test_a_needed_split_keeps_a_small_round_trip_below_its_other_causes():
    """mla_decode v3's split-KV partials (134 MB, allocated by its build: needed, the grid without the split
    would not fill the GPU) are a round trip too, worth +2.7 %: listed, far below the attend stage's own."""
    r = _load("mla_decode_v3_scratch")
    assert r.correctness["reference_reads"] == ["kv", "q"] and 1.3e8 < r.scratch_bytes < 1.4e8
    o = reread_across_stages(r, _stages(r))
    assert o is not None and o.facts.move == "scratch" and 1.0 < o.est_gain_pct < 5.0
    assert assess(r).opportunities[0].stage == "attend"


def test_the_inputs_the_reference_reads_are_told_from_a_workspace():
    import torch

    from kprof_mcp.capture.context import ReadKeys, scratch_bytes

    inputs = {"a": torch.zeros(10), "b": torch.zeros(20), "w": torch.zeros(100), "c": torch.zeros(5)}
    seen = ReadKeys(inputs)
    _ = seen["a"].sum() + seen.get("b").sum()
    assert seen.read_keys() == ["a", "b"]
    assert scratch_bytes(inputs, seen.read_keys(), lambda: inputs["c"], 0.0) == 400.0  # w; c is the output
    assert scratch_bytes(inputs, seen.read_keys(), lambda: inputs["c"], 64.0) == 464.0  # and the build's
    view = {**inputs, "w": inputs["a"][:5]}  # a view of a read input shares its storage: needed
    assert scratch_bytes(view, ["a", "b"], lambda: view["c"], 0.0) is None
    for copy in (dict, lambda d: {**d}, lambda d: list(d.values())):
        seen = ReadKeys(inputs)
        copy(seen)
        assert seen.read_keys() is None  # every key may be read: nothing told apart
    assert scratch_bytes(inputs, None, lambda: inputs["c"], 64.0) == 64.0


def test_an_input_the_reference_does_not_read_is_bytes_the_result_does_not_need():
    """The nineteenth held-back set's crop gathered through a materialised index (H100, annotation mode): out[i]
    = x[idx[i]] with idx an int64 tensor of flat offsets the package built, which its reference (a strided
    slice) never reads. One stage, DRAM at 80 % of its peak and 1.01x its model's bytes (the model counts the
    index): nothing over the model. Its reads pass the data the reference needs (x and the output, D − P)
    by far: it reads the index, whose bytes go in the what-if (the stage's DRAM use scaled by the bytes
    left). Was "reach peak DRAM bandwidth, +12.1 %" for +216.8 % measured; the fix (the slice) reads no index."""
    cal = Path(__file__).resolve().parents[1] / "calibration" / "recorded-heldout19"
    pair = (
        cal / "a_crop_gathered_through_a_materialised_per_element_index_tensor_where_a_strided_slice_serves"
    )
    r = ProfileResult.model_validate_json((pair / "bad.result.json").read_text())
    P, D_ = r.scratch_bytes, r.data_bytes
    assert P == 8 * 16384 * 4096  # the int64 index of the 16384 x 4096 crop
    (s,) = r.stages
    assert s.dram_read_bytes > 1.25 * (D_ - P)  # it reads more than the data the reference needs: the index
    stages = _stages(r)
    o = reread_across_stages(r, stages)
    assert o is not None and o.cause == "over_fetch" and o.facts.move == "unused_input"
    assert o.facts.value == pytest.approx(min(P, s.dram_read_bytes))
    assert o.share == pytest.approx(_share_by_hand(stages, [(min(P, s.dram_read_bytes), 0.0)]))
    top = assess(r).opportunities[0]
    assert top.stage is None and top.name.startswith("Stop reading an input the result does not need")
    assert 80 < top.est_gain_pct < 220  # measured +216.8 %
    fixed = ProfileResult.model_validate_json((pair / "good.result.json").read_text())
    assert fixed.scratch_bytes == P and reread_across_stages(fixed, _stages(fixed)) is None


def test_without_counters_the_models_bytes_past_the_needed_data_are_the_unused_input():
    """The same crop profiled live in event mode (H100, 2026-11-28, heldout19_fixes_2026-11-28.sh): no counters, its
    stage's model moves 12 bytes an element (the 8-byte index counted), twice what the reference needs (the crop
    read and written: D − P). The index's bytes come off at the attainable DRAM rate, labelled as the models';
    its fix's model moves only what is needed."""
    import gzip

    def load(name: str) -> ProfileResult:
        with gzip.open(D / f"{name}.result.json.gz", "rt") as f:
            return ProfileResult.model_validate_json(f.read())

    r = load("index_crop_v0_event")
    assert r.mode == "event" and r.scratch_bytes == 8 * 16384 * 4096
    (s,) = r.stages
    assert s.dram_read_bytes is None and s.bytes_model > 1.25 * (r.data_bytes - r.scratch_bytes)
    o = reread_across_stages(r, _stages(r))
    assert o is not None and o.facts.move == "unused_input" and o.facts.source == "model"
    assert o.facts.value == pytest.approx(r.scratch_bytes)
    T, bw = assess(r).stages[0].metrics.time_ns, 0.9 * s.peak_bytes_per_s
    # the index's bytes off at the attainable rate, never under the needed data moved once at it
    after = max(T - 1e9 * r.scratch_bytes / bw, 1e9 * (r.data_bytes - r.scratch_bytes) / bw)
    assert o.share == pytest.approx(1 - after / T, rel=1e-6)
    top = assess(r).opportunities[0]
    assert top.name.startswith("Stop reading an input") and "FLOP/byte models, no counters" in top.trigger
    assert 100 < top.est_gain_pct < 220  # event mode timed the pair 306.2 -> 96.5 us: +217 %
    fixed = load("index_crop_v1_event")
    assert reread_across_stages(fixed, _stages(fixed)) is None
