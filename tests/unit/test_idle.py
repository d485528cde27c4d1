"""Where a timeline's wall time went (kprof_mcp.analysis.idle): the GPU's idle time split by what
the host was doing, on Nsight Systems recordings of commands made on an H100 (the calibration's
command pairs, tests/calibration/recorded-accounting/*/bad.sqlite.xz, and the start-up probe of
tests/fixtures/h100_nsys), and on hand-built traces whose answer is known exactly."""

import gzip
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from conftest import packed, unpacked

from kprof_mcp.analysis import idle
from kprof_mcp.analysis.command import stage_static
from kprof_mcp.models import ProfileRequest
from kprof_mcp.modes.timeline import _command_timeline
from kprof_mcp.parsers import nsys
from kprof_mcp.parsers.kineto import Trace
from kprof_mcp.render import diagnosis as dx
from kprof_mcp.render.timeline import where_the_wall_time_went

ROOT = Path(__file__).resolve().parents[1]
REC = ROOT / "calibration" / "recorded-accounting"
PAIRS = {"sync_per_step": "sync", "host_bound_loop": "host", "launch_bound_loop": "launch"}


def _sqlite(pair: str, role: str, tmp_path: Path) -> Path:
    out = tmp_path / f"{pair}_{role}.sqlite"
    with packed(REC / pair / f"{role}.sqlite.gz") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def _replay(pair: str, role: str, tmp_path: Path):
    """The recorded command's trace through the same code that read it on the H100."""
    recorded = json.loads((REC / pair / f"{role}.result.json").read_text())
    req = ProfileRequest(**recorded["request"])
    tr = nsys.load_sqlite(_sqlite(pair, role, tmp_path))
    dev = recorded["device"]

    def static(name):
        return stage_static(name, req.stage_models.get(name), dev, {"bytes_per_s": 3.35e12})

    _, tl, _, by, _ = _command_timeline(req, static, tr, "Nsight Systems", True, dev.get("sm_count"))
    return recorded, tl, by


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_the_recorded_commands_breakdown_is_reproduced_from_their_trace(pair, tmp_path):
    recorded, tl, by = _replay(pair, "bad", tmp_path)
    assert by == "range" and tl.idle["scope"] == "ranges"
    want = recorded["timeline"]["idle"]
    assert tl.idle["window_ns"] == pytest.approx(want["window_ns"])
    for part, ns in want["parts_ns"].items():
        assert tl.idle["parts_ns"][part] == pytest.approx(ns, abs=1.0), part


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_every_idle_instant_is_given_to_exactly_one_host_state(pair, tmp_path):
    _, tl, _ = _replay(pair, "bad", tmp_path)
    d = tl.idle
    assert d["busy_ns"] + sum(d["parts_ns"].values()) == pytest.approx(d["window_ns"], rel=1e-9)
    assert d["idle_ns"] == pytest.approx(sum(d["parts_ns"].values()), rel=1e-9)


@pytest.mark.parametrize("pair,cause", sorted(PAIRS.items()))
def test_the_planted_host_state_owns_most_of_the_idle_time(pair, cause, tmp_path):
    _, tl, _ = _replay(pair, "bad", tmp_path)
    parts = tl.idle["parts_ns"]
    assert max(parts, key=parts.get) == cause
    assert parts[cause] > 0.5 * tl.idle["window_ns"]
    (top, *_) = dx.idle_opportunities(tl.idle)
    assert top.cause == cause
    # No cause claims more than the idle time it owns: none passes a fully busy GPU.
    for o in dx.idle_opportunities(tl.idle):
        assert o.share <= tl.idle["idle_ns"] / tl.idle["window_ns"] + 1e-9


def test_a_sync_per_step_names_the_sync_and_its_share_is_what_overlap_can_remove(tmp_path):
    _, tl, _ = _replay("sync_per_step", "bad", tmp_path)
    ev = tl.idle["evidence"]
    assert {r["call"] for r in ev["sync_calls"]} >= {"cudaStreamSynchronize", "cudaMemcpyAsync"}
    assert ev["sync_gaps"] >= tl.idle["occurrences"]  # at least one drained GPU per step
    (top, *_) = dx.idle_opportunities(tl.idle)
    # The share is the replay's (issue 36): the step replayed with the syncs dropped.
    rp = tl.idle["replay"]
    assert top.share == pytest.approx(1.0 - rp["step_ns"]["sync"] / rp["recorded_ns"])
    # Without the replay (older recordings): the idle time overlap could hide, min(idle after syncs, busy).
    old = dx.idle_opportunities({k: v for k, v in tl.idle.items() if k != "replay"})[0]
    busy, sync, w = tl.idle["busy_ns"], tl.idle["parts_ns"]["sync"], tl.idle["window_ns"]
    assert old.cause == "sync" and old.share == pytest.approx(min(sync, busy) / w)
    assert "cudaStreamSynchronize" in top.trigger and top.name.startswith("Stop synchronising every step")


def test_a_process_without_ranges_is_mostly_start_up_and_one_off_loads():
    """The start-up probe (imports, lazy module loads, a few kernels): the GPU is busy 0.3 % of the
    run; the advice is not launch overhead but that the host's own time dominates."""
    b = idle.breakdown(
        nsys.load_sqlite(unpacked(ROOT / "fixtures" / "h100_nsys" / "probe.sqlite")), process=True
    ).to_dict()
    assert b["busy_ns"] / b["window_ns"] < 0.01
    assert b["parts_ns"]["host"] > 0.9 * b["window_ns"]
    loads = {r["call"]: r["count"] for r in b["evidence"]["first_call_calls"]}
    assert loads.get("cuLibraryLoadData", 0) >= 10
    opps = dx.idle_opportunities({**b, "scope": "process"})
    assert [o.cause for o in opps[:2]] == ["host", "first_call"]
    assert "kprof.range" in opps[0].name and "launch" not in opps[0].name
    text = "\n".join(where_the_wall_time_went(b))
    assert "cuLibraryLoadData ×11" in text and "% of wall" in text


# --------------------------------------------------------------------------- hand-built traces


def _trace(kernels, api, memops=()):
    k = pd.DataFrame(
        [
            {
                "name": n,
                "start": s,
                "dur": e - s,
                "end": e,
                "stream": 7,
                "device": 0,
                "correlation": c,
                "grid_blocks": 1,
                "block_threads": 1,
                "regs": None,
                "smem": None,
                "blocks_per_sm": None,
                "warps_per_sm": None,
                "occupancy_est_pct": None,
            }
            for n, s, e, c in kernels
        ]
    )
    a = pd.DataFrame(
        [{"name": n, "start": s, "dur": e - s, "end": e, "correlation": c, "tid": 1} for n, s, e, c in api],
        columns=["name", "start", "dur", "end", "correlation", "tid"],
    )
    m = pd.DataFrame(
        [
            {
                "name": n,
                "start": s,
                "dur": e - s,
                "end": e,
                "kind": "memcpy",
                "stream": 7,
                "bytes": b,
                "correlation": c,
            }
            for n, s, e, c, b in memops
        ],
        columns=["name", "start", "dur", "end", "kind", "stream", "bytes", "correlation"],
    )
    empty = pd.DataFrame(columns=["name", "start", "dur", "end", "tid"])
    return Trace(kernels=k, memops=m, api=a, ranges=empty, cpu_ops=empty, num_sms=132, device_name="test")


US = 1000.0


def test_each_host_state_gets_the_idle_time_it_was_in():
    # t (µs): kernel 0-100; the host is in a stream sync 50-102, then works until 450 (after the sync:
    # "sync"); launch 450-455 -> kernel 455-500; 95 µs outside CUDA (short: "launch" overhead) 455-550,
    # launch 550-555 -> kernel 555-600; host work 600-900 (long: "host"); cuModuleLoadData 900-950
    # ("first_call"); an H2D copy call 950-1000 whose copy runs 990-1000; launch 1000-1005 -> kernel
    # 1005-1100.
    kernels = [
        ("k", 0, 100 * US, 1),
        ("k", 455 * US, 500 * US, 2),
        ("k", 555 * US, 600 * US, 3),
        ("k", 1005 * US, 1100 * US, 5),
    ]
    api = [
        ("cudaLaunchKernel", -5 * US, 0, 1),
        ("cudaStreamSynchronize", 50 * US, 102 * US, 90),
        ("cudaLaunchKernel", 450 * US, 455 * US, 2),
        ("cudaLaunchKernel", 550 * US, 555 * US, 3),
        ("cuModuleLoadData", 900 * US, 950 * US, 91),
        ("cudaMemcpyAsync", 950 * US, 1000 * US, 4),
        ("cudaLaunchKernel", 1000 * US, 1005 * US, 5),
    ]
    memops = [("Memcpy HtoD (Pageable -> Device)", 990 * US, 1000 * US, 4, 4096)]
    b = idle.breakdown(_trace(kernels, api, memops), 0.0, 1100 * US)
    p = {k: v / US for k, v in b.parts_ns.items()}
    assert b.busy_ns / US == pytest.approx(100 + 45 + 45 + 10 + 95)
    assert p["sync"] == pytest.approx(355)  # 100-455: the whole gap that began inside the sync
    assert p["launch"] == pytest.approx(55 + 5)  # 500-555: a short stretch, then a launch call; 1000-1005
    assert p["host"] == pytest.approx(300)  # 600-900
    assert p["first_call"] == pytest.approx(50)  # 900-950
    assert p["copy_h2d"] == pytest.approx(40)  # 950-990: the host staging, the GPU idle
    assert p["other_api"] == 0
    assert b.busy_ns + sum(b.parts_ns.values()) == pytest.approx(b.window_ns)
    assert b.evidence["h2d_copies"] == 1 and b.evidence["h2d_exposed_ns"] == pytest.approx(10 * US)


def test_the_host_work_before_an_explicit_module_load_is_the_modules_production():
    # A JIT's kernel built at every step (the 24th held-back set's Triton kernel defined inside its launcher:
    # ~3.2 ms of Python — a new JITFunction, its hash, its cache read — then cuModuleLoadData, every step).
    # Per step of 1000 µs: kernel 0-50; host work 50-800; cuModuleLoadData 800-850; short host time 850-900;
    # launch 900-905 -> kernel 905-1000. The stretch before the load is the load's ("first_call"), and the
    # replay's one-off what-if removes it with the load: the step becomes its kernels and launches.
    kernels, api = [], []
    for i in range(3):
        t = 1000 * US * i
        kernels += [("k", t, t + 50 * US, 10 * i), ("k", t + 905 * US, t + 1000 * US, 10 * i + 1)]
        api += [
            ("cudaLaunchKernel", t - 5 * US, t, 10 * i),
            ("cuModuleLoadData", t + 800 * US, t + 850 * US, 10 * i + 5),
            ("cudaLaunchKernel", t + 900 * US, t + 905 * US, 10 * i + 1),
        ]
    tr = _trace(kernels, api)
    b = idle.breakdown(tr, 0.0, 3000 * US, 3)
    p = {k: v / US for k, v in b.parts_ns.items()}
    assert p["first_call"] == pytest.approx(3 * (750 + 50)) and p["host"] == 0
    from kprof_mcp.analysis import replay

    rp = replay.gains(tr, 0.0, 3000 * US, 3)
    assert rp["step_ns"]["first_call"] < 0.3 * rp["identity_ns"]  # the production and the load both go
    assert rp["step_ns"]["host"] == pytest.approx(rp["identity_ns"], rel=0.01)  # no host work of its own left
    # The runtime's own lazy loads are not a JIT's: the host stretch before one stays the host's.
    lazy = [("cuLibraryLoadData", *c[1:]) if c[0] == "cuModuleLoadData" else c for c in api]
    q = idle.breakdown(_trace(kernels, lazy), 0.0, 3000 * US, 3).parts_ns
    assert q["host"] / US == pytest.approx(3 * 750) and q["first_call"] / US == pytest.approx(3 * 50)


def test_modules_loaded_and_unloaded_at_every_step_are_calls_in_the_loop_not_one_off():
    # A library's plan made and destroyed at every step (the 35th held-back set's cuFFT plan cache switched
    # off: 16 cuModuleLoadData and 16 cuModuleUnload a step). Per step of 1000 µs: kernel 0-50; host work
    # 50-700; cuModuleLoadData 700-850; cuModuleUnload 850-880; short host time 880-900; launch 900-905 ->
    # kernel 905-1000. Warming up removes none of it: the loads and unloads are CUDA calls in the loop
    # ("other_api", the cuda_api cause), the host work before a load stays the host's, and keeping the plan
    # (the cuda_api replay) removes the loads and the unloads. Without the unloads the loads stay a JIT's.
    kernels, api = [], []
    for i in range(3):
        t = 1000 * US * i
        kernels += [("k", t, t + 50 * US, 10 * i), ("k", t + 905 * US, t + 1000 * US, 10 * i + 1)]
        api += [
            ("cudaLaunchKernel", t - 5 * US, t, 10 * i),
            ("cuModuleLoadData", t + 700 * US, t + 850 * US, 10 * i + 5),
            ("cuModuleUnload", t + 850 * US, t + 880 * US, 10 * i + 6),
            ("cudaLaunchKernel", t + 900 * US, t + 905 * US, 10 * i + 1),
        ]
    tr = _trace(kernels, api)
    b = idle.breakdown(tr, 0.0, 3000 * US, 3)
    p = {k: v / US for k, v in b.parts_ns.items()}
    assert p["first_call"] == 0 and p["other_api"] == pytest.approx(3 * (150 + 30))
    assert p["host"] == pytest.approx(3 * 650)
    assert b.evidence["other_calls"][0]["call"] == "cuModuleLoadData (loaded again at every step)"
    from kprof_mcp.analysis import replay

    rp = replay.gains(tr, 0.0, 3000 * US, 3)
    step = rp["identity_ns"]
    assert rp["step_ns"]["cuda_api"] == pytest.approx(step - 180 * US, rel=0.02)  # loads and unloads gone
    assert rp["step_ns"]["first_call"] == pytest.approx(step, rel=0.01)  # nothing one-off left
    api_opp = next(o for o in dx.idle_opportunities({**b.to_dict(), "replay": rp}) if o.cause == "cuda_api")
    assert "plan or handle alive" in api_opp.name
    assert api_opp.est_gain_pct == pytest.approx(100 * (step / rp["step_ns"]["cuda_api"] - 1), rel=0.01)
    kept = [c for c in api if c[0] != "cuModuleUnload"]  # loaded at every step, never unloaded: a JIT's
    q = idle.breakdown(_trace(kernels, kept), 0.0, 3000 * US, 3).parts_ns
    assert q["first_call"] / US == pytest.approx(3 * (650 + 150)) and q["other_api"] == 0


def test_a_launch_far_longer_than_launches_take_is_a_one_off_and_polls_are_not_calls():
    kernels = [("k", i * 20 * US, i * 20 * US + 10 * US, i) for i in range(1, 30)]
    api = [("cudaLaunchKernel", i * 20 * US - 5 * US, i * 20 * US - 1 * US, i) for i in range(2, 30)]
    api.append(("cudaLaunchKernel", -2000 * US, 19 * US, 1))  # the first launch, loading its module
    api.append(("cudaEventQuery", 11 * US, 19 * US, 99))  # a poll inside an idle gap: not a call
    b = idle.breakdown(_trace(kernels, api), 0.0, 590 * US)
    assert b.parts_ns["first_call"] == pytest.approx(19 * US)  # 0-19: inside the long first launch
    assert b.parts_ns["other_api"] == 0
    # One launch per occurrence: the gap is the loop's, not launch overhead of the work.
    one = dx.idle_opportunities({**b.to_dict(), "occurrences": 29})
    assert "launch" not in [o.cause for o in one]
    many = dx.idle_opportunities({**b.to_dict(), "occurrences": 1})
    assert many[0].cause == "launch"


def test_a_kineto_trace_names_the_pytorch_op_that_synchronised(tmp_path):
    """tests/fixtures/h100_commands/kineto_sync_loop: the sync loop (bad) profiled on the H100 with
    timeline_engine="kineto" (2026-11-24): the CPU ops around each D2H copy and sync are aten::item,
    one per kept step; the sync is opportunity 1 and says so."""
    from kprof_mcp.parsers import kineto

    fix = ROOT / "fixtures" / "h100_commands" / "kineto_sync_loop"
    trace = tmp_path / "trace.json"
    with gzip.open(fix / "trace.json.gz", "rb") as src, open(trace, "wb") as dst:
        shutil.copyfileobj(src, dst)
    recorded = json.loads((fix / "result.json").read_text())
    req = ProfileRequest(**recorded["request"])
    _, tl, _, by, _ = _command_timeline(
        req,
        lambda n: stage_static(n, None, recorded["device"], {}),
        kineto.load_trace(trace),
        "Kineto",
        True,
        132,
    )
    assert by == "range" and tl.idle["occurrences"] == 10
    assert tl.idle["evidence"]["sync_ops"] == [{"op": "aten::item", "count": 10}]
    (top, *_) = dx.idle_opportunities(tl.idle)
    assert top.cause == "sync" and "made by aten::item x10" in top.trigger
