"""The machine model without counters (analysis.diagnosis.static_mix): its gates, its uses and moves on
hand-made listings of the shapes the recordings show, and the labels it renders with. The same model on
every recorded kernel pair: test_static_model_recorded.py."""

from dataclasses import replace

import pytest

from kprof_mcp import machines
from kprof_mcp.analysis.accounting import account
from kprof_mcp.analysis.diagnosis import Metrics, opportunities
from kprof_mcp.analysis.diagnosis import static_mix as sm
from kprof_mcp.analysis.diagnosis.limiter import limiter
from kprof_mcp.analysis.machine_inputs import listing, sm_clock_hz
from kprof_mcp.devices import load_devices
from kprof_mcp.render.diagnosis.words import words

H100 = machines.load("sm_90", "H100_SXM")
CLOCK = 1.98e9
DRAM_PER_CLOCK = 3.35e12 / (132 * CLOCK)
# calib_fp64 v0's listing (tests/fixtures/sass/calib_fp64_v0_sm90.sass.gz): a float64 FMA chain.
FP64 = {
    "fp64": 192,
    "integer": 30,
    "conversion": 18,
    "global_load": 2,
    "global_store": 2,
    "branch": 12,
    "nop": 15,
}
FP64_LOOPS = {"fp64": 168, "integer": 6, "branch": 3}
F64_OPS = ({"kind": "f64", "detail": "mulf", "line": "impl.py:28", "count": 16},)


def _lst(classes, loops=None, flops=8.6e9) -> sm.Listing:
    return sm.Listing(classes, loops, CLOCK, 4.0, DRAM_PER_CLOCK, 5120 / 132, 128.0, flops)


def _m(classes=FP64, loops=FP64_LOOPS, ir=F64_OPS, **kw) -> Metrics:
    """An event-mode stage (no counters): the FLOP/byte model's figures, the listing and its TTIR."""
    base = dict(
        time_ns=356_512.0,
        sol_ns=130_000.0,
        best_sol_ns=65_000.0,
        attainable_sol_ns=140_000.0,
        dram_pct=11.2,
        compute_pct=36.0,
        tc_pct=0.0,
        machine=H100,
        dtype="float32",
        sm_count=132,
        grid_blocks=16384,
        elements=33.5e6,
        ir_ops=ir,
        listing=_lst(classes, loops),
    )
    base.update(kw)
    return Metrics(**base)


def _uses(m):
    return {u.key: (round(u.util, 3), u.source) for u in limiter(m).uses}


def test_fp64_chain_the_fp64_pipe_limits_and_the_move_runs_labelled_static():
    m = _m()
    lim = limiter(m)
    assert (lim.resource, lim.util, lim.source, lim.bound) == ("fp64", 1.0, "static", True)
    u = _uses(m)
    # One pass of the loops: 168 DFMA x 32 / rate clocks on the FP64 pipe (64 a clock per SM in the table,
    # the H100's measured rate here), 177 / 4 = 44.25 issue slots.
    assert u["issue"] == (round(44.25 / (168 * 32 / H100.rate("fp64")), 3), "static")
    assert u["dram"] == (0.112, "model")
    assert "fma" not in u and "tensor" not in u  # the math is the listing's: on the FP64 pipe
    top = opportunities(m)[0]
    assert (top.cause, top.facts.move, top.facts.source) == ("move_work", "fp64_to_fp32", "static")
    assert 0.45 < top.share < 0.55  # half the FP64 time at the FP32 rate: about 2x
    action, trigger, _ = words(top)
    assert "static SASS mix / TTIR, no counters" in trigger and "fp64=100.0% of peak" in trigger


def test_without_its_loops_the_whole_listing_is_the_pass():
    u = _uses(_m(loops=None))
    fp64 = 192 * 32 / H100.rate("fp64")
    assert u["fp64"] == (1.0, "static") and u["issue"] == (round((256 / 4) / fp64, 3), "static")
    assert u["xu"] == (round(18 * 32 / H100.rate("xu") / fp64, 3), "static")  # the conversions


def test_a_legacy_mix_places_its_fp_arith_by_the_ttir():
    legacy = {"fp_arith": 192, "integer": 30, "conversion": 18, "global_load": 2, "global_store": 2}
    assert limiter(_m(classes=legacy, loops=None)).resource == "fp64"  # the TTIR holds f64 arithmetic
    no_f64 = _m(
        classes=legacy, loops=None, ir=({"kind": "int_div", "detail": "divsi i32", "line": "k.py:3"},)
    )
    assert sm.pass_times(no_f64)["fma"] == 192 * 32 / H100.rate("fma") and "fp64" not in sm.pass_times(no_f64)


@pytest.mark.parametrize(
    "why, change",
    [
        ("the FLOP/byte model explains the time", dict(dram_pct=75.0)),
        (
            "a tensor-core kernel: its work is the model's",
            dict(listing=_lst({**FP64, "tensor_core": 4}, FP64_LOOPS)),
        ),
        (
            "nothing special: fp32 math, no TTIR evidence",
            dict(listing=_lst({"fp32": 192, "integer": 30}), ir_ops=()),
        ),
        (
            "counters measured: they decide",
            dict(accounting=account({"pipe_fp64_pct": 90.0, "issue_active_pct": 48.0}, 0.0)),
        ),
        ("no listing", dict(listing=None)),
    ],
)
def test_where_the_static_model_does_not_apply(why, change):
    m = _m(**change)
    assert all(u.source != "static" for u in limiter(m).uses), why


def test_a_memory_side_listing_stays_on_the_model_and_moves_no_code():
    """strided_access v0's shape: index math with integer division around scalar loads (the TTIR names
    the division): one pass is DRAM's, so neither the pipes nor the division's what-if are the static
    model's."""
    gather = {"integer": 103, "conversion": 2, "global_load": 8, "global_store": 2, "branch": 5, "other": 11}
    ir = ({"kind": "int_div", "detail": "divsi i32", "line": "impl.py:20"},)
    m = _m(classes=gather, loops={}, ir=ir, dram_pct=8.8, compute_pct=0.0)
    assert not sm.instruction_bound(m) and limiter(m).source == "model"
    assert all(o.facts.move is None for o in opportunities(m))


def test_code_moves_read_the_issue_slots_over_the_measured_time():
    """precise_pow v0's loop: a libdevice powf per step. The issue slots are the pass's limiter, so the
    static model takes them busy all of T: 128 thread-instructions a clock per SM, x SMs x clock x T."""
    loop = {
        "fp32": 445,
        "fp_compare": 188,
        "integer": 118,
        "conversion": 18,
        "mufu": 16,
        "branch": 53,
        "other": 69,
    }
    ir = ({"kind": "libdevice", "detail": "__nv_powf", "line": "impl.py:48"},)
    m = _m(classes=loop, loops=loop, ir=ir, time_ns=1_003_936.0, dram_pct=4.0, compute_pct=0.8, listing=None)
    m = replace(m, listing=_lst(loop, loop, flops=5.37e8))
    lim = limiter(m)
    assert (lim.resource, lim.source) == ("issue", "static")
    mv = next(mv for mv in H100.moves if mv.key == "precise_to_fast_math")
    issued, src = sm.code_counts(m, mv, lim)
    assert issued == pytest.approx(128 * 132 * CLOCK * 1_003_936e-9)
    assert src == pytest.approx(issued * 445 / sum(loop.values()))
    top = opportunities(m)[0]
    assert (top.facts.move, top.facts.source, top.facts.lines) == (
        "precise_to_fast_math",
        "static",
        ("impl.py:48",),
    )
    assert 0.5 < top.share < 0.95  # the fast version's MUFU work stays (the move's per-call table)
    assert (
        sm.code_counts(replace(m, listing=_lst(loop, loop, flops=5.37e8)), mv, replace(lim, source="model"))
        is None
    )


def test_spills_share_of_the_pass_memory_time():
    """heavy_spills v0's shape: LDL/STL at L2's bytes per clock against the global accesses at DRAM's."""
    spills = {"fp32": 4480, "mufu": 576, "global_load": 128, "global_store": 128, "local_spill": 3450}
    m = _m(classes=spills, loops={}, ir=(), local_spill_bytes=2688.0, dram_pct=18.7, compute_pct=0.6)
    t = sm.pass_times(m)
    assert sm.spill_share(m) == pytest.approx(t["local"] / (t["local"] + t["dram"]))
    assert 0.8 < sm.spill_share(m) < 0.85
    o = next(o for o in opportunities(m) if o.cause == "spills")
    assert o.facts.source == "static" and "static SASS mix" in words(o)[1]
    assert sm.spill_share(replace(m, local_spill_bytes=0.0)) is None  # the compiler spilled nothing
    assert sm.spill_share(replace(m, listing=_lst({"fp32": 10, "global_load": 2}))) is None  # no LDL/STL


def test_contended_atomics_from_the_listing():
    """contended_atomics v0's shape: REDG per element, no loop, almost no DRAM traffic for its time."""
    hist = {"integer": 194, "global_load": 4, "global_store": 2, "shared_load": 9, "atomic": 18, "branch": 55}
    m = _m(
        classes=hist,
        loops={},
        ir=(),
        dram_pct=0.5,
        compute_pct=0.0,
        time_ns=4.3e6,
        attainable_sol_ns=22_000.0,
    )
    share, facts = sm.atomics(m, limiter(m).uses)
    assert share == pytest.approx(m.attainable_headroom) and facts == {
        "atomic_share": 0.75,
        "source": "static",
    }
    o = next(o for o in opportunities(m) if o.cause == "atomics")
    assert "75% of the SASS listing's global accesses" in words(o)[1]
    assert sm.atomics(replace(m, dram_pct=80.0), limiter(replace(m, dram_pct=80.0)).uses) is None
    busy = {"integer": 769, "global_load": 4, "atomic": 3, "atomic_shared": 8}  # v1: ALU-bound, not contended
    assert sm.atomics(replace(m, listing=_lst(busy, {})), limiter(m).uses) is None


def test_the_same_near_peak_as_the_limiter():
    from kprof_mcp.analysis.diagnosis.limiter import NEAR_PEAK

    assert sm.NEAR_PEAK == NEAR_PEAK


def test_no_figure_passes_its_peak():
    for classes in (FP64, {"mufu": 500, "fp32": 10}, {"integer": 900, "fp32": 5, "global_load": 1}):
        m = _m(classes=classes, loops={}, ir=({"kind": "libdevice", "detail": "__nv_sinf", "line": "a:1"},))
        raw = sm.uses(m, [])  # before Use holds a figure to its peak
        assert raw and all(0.0 < u <= 1.0 for _, u in raw) and max(u for _, u in raw) == 1.0
        assert all(o.share <= 1.0 for o in opportunities(m))


def test_the_listing_from_a_result_and_its_clock():
    from conftest import h100_result

    r = h100_result("matmul", "v1")
    s = r.stages[0]
    spec = next(d for d in load_devices() if d.key == r.device.spec_key)
    assert listing(s, r, H100, spec) is None  # recorded without a SASS listing: nothing invented
    res = s.resources.model_copy(update={"sass_mix": FP64, "sass_loop_mix": FP64_LOOPS})
    s2 = s.model_copy(update={"resources": res, "sm_clock_hz": None})
    lst = listing(s2, r, H100, spec)
    assert lst.classes == FP64 and lst.loops == FP64_LOOPS and lst.flops == s.flops
    assert lst.clock_hz == sm_clock_hz(s2, r, spec) and lst.dram_per_clock == pytest.approx(
        s.peak_bytes_per_s / (s.sm_count * lst.clock_hz)
    )
    # The clock: measured, else the locked one, else the device's maximum, else the datasheet's FP32 peak's.
    assert sm_clock_hz(s.model_copy(update={"sm_clock_hz": 1.5e9}), r, spec) == 1.5e9
    bare = r.model_copy(
        update={"device": r.device.model_copy(update={"clocks_before": {}, "sm_clock_lock_mhz": None})}
    )
    assert sm_clock_hz(s2, bare, spec) == pytest.approx(
        spec.peak_tflops["float32"] * 1e12 / (spec.sm_count * 256)
    )
    locked = bare.model_copy(update={"device": bare.device.model_copy(update={"sm_clock_lock_mhz": 1755})})
    assert sm_clock_hz(s2, locked, spec) == 1.755e9
