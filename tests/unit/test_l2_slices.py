"""The L2's busiest slice as a resource (issue 36, analysis.diagnosis.slices): traffic to a few lines or
atomics to a few addresses load the slice that owns them to its peak while the slices' average stays low.
Where the busiest slice is the limiter, its excess over the average is what spreading the traffic removes,
bounded by every other resource's work; where the atomic units were measured per slice, they, not the
memory-wait share, decide whether atomics are contended."""

import dataclasses
import sys
from pathlib import Path

import pytest

CAL = Path(__file__).resolve().parents[1] / "calibration"
CONTENDED = (
    "recorded-accounting/contended_atomics"  # a histogram into a few bins, recorded before the counters
)


def _stage(pair: str, role: str = "bad"):
    sys.path[:0] = [str(CAL), str(CAL.parent)]
    import table

    r = table.load(CAL / pair / f"{role}.result.json")
    return table.assess_facts(r).stages[0].metrics


def _with(m, slices: dict, l2: float | None = None):
    a = m.accounting
    levels = dict(a.levels) if l2 is None else {**a.levels, "l2": l2}
    return dataclasses.replace(m, accounting=dataclasses.replace(a, slices=slices, levels=levels))


def _opps(m):
    from kprof_mcp.analysis.diagnosis.opportunities import opportunities

    return opportunities(m)


def test_the_recordings_before_the_counters_keep_the_memory_wait_reading():
    m = _stage(CONTENDED)
    assert m.accounting.slices == {}
    top = _opps(m)[0]
    assert top.cause == "atomics" and top.facts.memory_wait > 0.99 and top.facts.hot_slice_pct is None


def test_a_hot_atomic_unit_is_contention_bounded_by_the_next_limiter():
    from kprof_mcp.analysis.diagnosis import slices
    from kprof_mcp.analysis.diagnosis.limiter import limiter

    m = _with(_stage(CONTENDED), {"l2": 99.0, "l2_atomic": 2.0, "l2_atomic_max": 99.0}, l2=3.0)
    lim = limiter(m)
    cause, share, facts = slices.hot_slice(m, lim)
    assert cause == "atomics" and facts["hot_slice_pct"] == 99.0 and facts["slice_avg_pct"] == 2.0
    # T'/T = max(1 − (0.99 − 0.02), the busiest other resource at its attainable rate)
    rest = max(
        u.util / (0.90 if u.key in ("dram", "l2", "l1") else 0.95) for u in lim.uses if u.key != "blocks"
    )
    assert share == pytest.approx(1.0 - max(0.03, rest))
    top = _opps(m)[0]
    assert top.cause == "atomics" and top.facts.hot_slice_pct == 99.0
    assert top.facts.memory_wait is None  # the memory-wait reading is not used where the slices were measured


def test_atomics_on_a_balanced_l2_are_not_called_contended():
    """Atomics spread over many addresses (a scatter-add): every slice's atomic unit alike, none hot."""
    m = _with(_stage(CONTENDED), {"l2": 30.0, "l2_atomic": 25.0, "l2_atomic_max": 28.0}, l2=27.0)
    assert not any(o.cause == "atomics" and o.facts.fence_wait is None for o in _opps(m))


def test_a_hot_slice_of_reads_is_over_fetch_at_the_l2():
    """A small table read past L1 by every program: one slice at its peak, its atomic unit idle."""
    from kprof_mcp.analysis.diagnosis import slices
    from kprof_mcp.analysis.diagnosis.limiter import limiter

    m = _with(_stage(CONTENDED), {"l2": 97.0, "l2_atomic": 0.0, "l2_atomic_max": 0.0}, l2=5.0)
    cause, share, facts = slices.hot_slice(m, limiter(m))
    assert cause == "over_fetch" and facts["resource"] == "l2" and share > 0.5
    top = _opps(m)[0]
    assert top.cause == "over_fetch" and top.facts.resource == "l2" and top.facts.hot_slice_pct == 97.0


def test_no_hot_slice_under_the_limiter_threshold_or_when_another_resource_is_busier():
    from kprof_mcp.analysis.diagnosis import slices
    from kprof_mcp.analysis.diagnosis.limiter import Limiter, Use

    m = _with(_stage(CONTENDED), {"l2": 50.0, "l2_atomic": 1.0, "l2_atomic_max": 50.0}, l2=5.0)
    lim = Limiter("l2", 0.05, False, uses=(Use("l2", 0.05),))
    assert slices.hot_slice(m, lim) is None  # 50 % is not near its peak
    m = _with(_stage(CONTENDED), {"l2": 70.0, "l2_atomic": 1.0, "l2_atomic_max": 70.0}, l2=5.0)
    lim = Limiter("dram", 0.9, True, uses=(Use("dram", 0.9), Use("l2", 0.05)))
    assert slices.hot_slice(m, lim) is None  # DRAM is the limiter


def test_the_words_name_the_busiest_slice():
    from kprof_mcp.analysis.diagnosis.metrics import Facts
    from kprof_mcp.render.diagnosis import assess  # noqa: F401  (the renderer's words)
    from kprof_mcp.render.diagnosis.memory import _over_fetch
    from kprof_mcp.render.diagnosis.words import _atomics

    name, trigger, _ = _atomics(Facts(hot_slice_pct=99.0, slice_avg_pct=2.0, resource="l2"))
    assert name.startswith("Cut contended global atomics") and "busiest L2 slice's atomic unit 99%" in trigger
    name, trigger, _ = _over_fetch(Facts(hot_slice_pct=97.0, slice_avg_pct=5.0, resource="l2"))
    assert (
        "in L1 or shared memory" in name
        and trigger == "busiest L2 slice 97% of its peak, the slices' average 5.0%"
    )
