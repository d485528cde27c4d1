"""An atomic emulated by a compare-and-swap loop (issue 36, after the thirteenth held-back set): the what-if of the
native atomic takes the retried attempts and the waits on their returned values away, while the L2's busiest atomic
unit still applies one operation per element. Before it, the contended-atomics reading took every memory wait:
+2,124 % (then +1,528 %) for the fix's +265 % on an H100."""

import sys
from pathlib import Path

import pytest

CAL = Path(__file__).resolve().parents[1] / "calibration"
CAS = "recorded-heldout13/a_float_atomic_max_emulated_with_a_compare_and_swap_loop"
LOCK = (
    "recorded-heldout24/per_program_partial_sums_merged_into_one_buffer_under_one_spin_lock__the_layer_norm_"
    "backward_s_GROUP_SIZE_M___1"
)


def _load(pair: str, role: str = "bad"):
    sys.path[:0] = [str(CAL), str(CAL.parent)]
    import table

    r = table.load(CAL / pair / f"{role}.result.json")
    return r, table.assess(r).opportunities, table.assess_facts(r).opportunities


def test_the_cas_max_gets_the_native_atomic_at_its_retries_and_atomic_unit_floor():
    from conftest import recorded_metrics

    from kprof_mcp.analysis.diagnosis import locks

    r, opps, facts = _load(CAS)
    m = recorded_metrics(CAL / CAS / "bad.result.json")
    # 1,551,904 warp-level atomic requests for 8 SASS atomics x 4 warps x 16,384 programs a pass
    assert locks.retries(m) == pytest.approx(1551904 / (8 * 4 * 16384), rel=1e-6)
    assert opps[0].name.startswith("Use the native atomic instead of a compare-and-swap loop")
    f = facts[0].opportunity.facts
    assert f.move == "cas_loop" and f.value == pytest.approx(2.96, abs=0.01)
    # the busiest atomic unit at 56.9 % over the 2.96 tries bounds the step: T'/T = 0.569 / 2.96
    assert opps[0].est_gain_pct == pytest.approx(100.0 * (2.96 / 0.569 - 1.0), rel=0.01)
    assert "2.96x one pass's atomics executed" in opps[0].trigger
    # the contended reading (every memory wait gone) is not listed beside it
    assert not any(o.name.startswith("Cut contended global atomics") for o in opps)


def test_the_native_max_and_a_spin_lock_are_not_cas_loops():
    from conftest import recorded_metrics

    from kprof_mcp.analysis.diagnosis import locks

    assert locks.retries(recorded_metrics(CAL / CAS / "good.result.json")) is None  # tl.atomic_max: no CAS
    assert (
        locks.retries(recorded_metrics(CAL / LOCK / "bad.result.json")) is None
    )  # an exchange releases: a lock
    _, opps, _ = _load(LOCK)
    assert not any(o.name.startswith("Use the native atomic") for o in opps)
