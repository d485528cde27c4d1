"""A contended spin lock (kprof_mcp.analysis.diagnosis.locks, issue 36), on Nsight Compute recordings made on an
H200 (tests/calibration/recorded-heldout24: 264 programs merging partial sums under one lock, and the fix's 64
locks) and an H100 (recorded-heldout12, -13: atomics without a lock, a compare-and-swap loop on a float maximum,
recorded-heldout8: a scan whose programs wait in a chain)."""

import sys
from pathlib import Path

import pytest

from kprof_mcp.analysis import assessment
from kprof_mcp.analysis.diagnosis import locks
from kprof_mcp.analysis.diagnosis.limiter import limiter

CAL = Path(__file__).resolve().parents[1] / "calibration"
sys.path.insert(0, str(CAL))
import table  # noqa: E402 — the recordings as the calibration table reads them

LOCK = next((CAL / "recorded-heldout24").glob("per_program_partial_sums*"))


def _metrics(path: Path):
    r = table.load(path)
    s = r.stages[0]
    return assessment.stage_metrics(s, None, 1.0, r, assessment.machine_for(r)), r


def test_a_compare_and_swap_spun_on_by_every_program_is_a_contended_lock():
    m, _ = _metrics(LOCK / "bad.result.json")
    r = locks.spins(m)
    # 63,091 atomic requests from 264 programs whose code issues 3 atomics a pass: the loop went round ~80 times.
    assert r == pytest.approx(63091 / 264 / 3, rel=1e-6)
    share, w, _ = locks.lock_share(m, limiter(m))
    assert w == pytest.approx(m.accounting.share("barrier", "membar")) and 0.5 < w < 0.6
    assert share == pytest.approx(w)  # no pipe or the issue slots near it: the waiting is all that goes


def test_the_lock_is_the_cause_and_the_latency_what_ifs_are_not():
    _, r = _metrics(LOCK / "bad.result.json")
    a = assessment.assess(r)
    top = a.opportunities[0]
    assert top.cause == "atomics" and top.opportunity.facts.move == "lock"
    # More programs or loads in flight only queue more programs on the lock: those what-ifs are not offered.
    assert not [
        o
        for o in a.opportunities
        if o.stage == "partials_one_lock" and o.cause in ("occupancy", "latency") and o.opportunity.specific
    ]
    # The fix's 64 locks (a few programs to each): no spinning to speak of.
    assert locks.spins(_metrics(LOCK / "good.result.json")[0]) is None


@pytest.mark.parametrize(
    "folder",
    [
        "recorded-heldout12/scatter_add_atomics_with_acquire_release_ordering",
        "recorded-heldout13/a_float_atomic_max_emulated_with_a_compare_and_swap_loop",
        "recorded-heldout12/a_scan_whose_programs_wait_in_a_chain_for_their_predecessor_s_prefix",
    ],
)
def test_atomics_without_a_contended_lock_are_not_one(folder):
    for role in ("bad", "good"):
        m, _ = _metrics(CAL / folder / f"{role}.result.json")
        assert locks.lock_share(m, limiter(m)) is None
