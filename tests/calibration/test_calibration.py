"""The calibration recordings (made on an H100 by record.py) re-assessed with the current
diagnosis: docs/diagnosis-calibration.md's table must be exactly what the model says today, so a
change to the model shows up here and in the doc together (``python tests/calibration/table.py
--write-doc`` regenerates it)."""

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import table  # noqa: E402
from pairs import PAIRS  # noqa: E402
from record import slug  # noqa: E402

RECORDED = HERE / "recorded"
pytestmark = pytest.mark.skipif(
    not (RECORDED / "measured.json").exists(), reason="no calibration recordings yet"
)


def test_every_pair_is_recorded_with_a_measured_gain():
    measured = json.loads((RECORDED / "measured.json").read_text())["pairs"]
    for p in PAIRS:
        assert (RECORDED / slug(p.name) / "bad.result.json").is_file(), p.name
        rec = measured[p.name]
        assert "error" not in rec, rec.get("error")
        if p.good:
            assert rec["measured_gain_pct"] is not None and len(rec["event_ns"]["good"]) >= 1


def test_the_documented_tables_are_what_the_model_says_now():
    for (begin, end), current in table.sections().items():
        assert table.documented(begin, end) == current.strip(), (
            "run: python tests/calibration/table.py --write-doc"
        )


def test_the_calibration_targets_are_met():
    """Issue 12's targets, on the recorded calibration set (not timed: recorded figures)."""
    lines, ok = table.summary(table.rows())
    assert ok, "\n".join(lines)


def test_the_holdout_set_is_assessed_with_the_same_model():
    rows = table.rows(table.HOLDOUT, only_recorded=True)
    assert len(rows) == 6 and all(r["recorded"] and r["measured"] > 0 for r in rows)
    assert all(r["rank"] == 1 for r in rows), [(r["pair"], r["rank"]) for r in rows]


def test_every_planted_problem_is_ranked_and_estimated_from_its_own_counter():
    for r in table.rows():
        if r["recorded"] and r["cause"]:
            assert r["rank"] is not None, (
                f"{r['pair']}: the planted cause {r['cause']} is not among the opportunities"
            )


ISSUE_26 = {p.name for p in table.ALL_PAIRS if table.recorded_in(p) == table.ACCOUNTING}


def test_issue_26s_pairs_still_meet_its_targets_on_both_halves():
    """Issue 26's 21 pairs (recorded-accounting/): opportunity 1 names the cause the fix removes in every
    planted pair of both halves; the top estimate within 2x of the measured gain in >= 80 % of each
    half; the near-roof GEMM and a healthy memory-bound kernel <= 15 %."""
    for half in ("fit", "holdout"):
        rows = [r for r in table.accounting_rows(half) if r["pair"] in ISSUE_26]
        lines, ok = table.summary(rows)
        assert ok, f"{half}:\n" + "\n".join(lines)
    rows = [
        r for r in table.accounting_rows("fit") + table.accounting_rows("holdout") if r["pair"] in ISSUE_26
    ]
    assert len(rows) == 21 and all(r["recorded"] for r in rows)
    assert {r["pair"] for r in rows if r["planted"] == "none"} == {"near-roof GEMM", "healthy memory-bound"}
    named = {r["cause"]: r["top_cause"] for r in rows if r["cause"]}
    # The catalogue's causes, the machine model's move, and the timeline's (commands through profile_command).
    for cause in (
        "move_work",
        "atomics",
        "small_tiles",
        "bank_conflicts",
        "sync",
        "host",
        "launch",
        "fusion",
    ):
        assert named[cause] == cause, named
    assert sum(r["mode"] == "nsys" and r["kernel"].endswith(".py bad→good") for r in rows) == 4


def test_issue_36s_set_is_judged_as_it_is():
    """Issue 36's pairs (recorded-model/, recorded-replay/, recorded-heldout/): at least 24 pairs in 12
    classes or more over the whole set, each recorded with a measured gain; the misses are the ones
    docs/diagnosis-calibration.md explains, so a change that mends or adds one shows here."""
    rows = table.accounting_rows("fit") + table.accounting_rows("holdout") + table.heldout_rows()
    assert len(rows) >= 24 and all(r["recorded"] for r in rows)
    assert all(r["measured"] is not None for r in rows if r["cause"])
    assert len({r["cause"] for r in rows if r["cause"]}) >= 12
    missed = sorted(r["pair"] for r in rows if r["cause"] and r.get("rank") != 1)
    assert missed == ["IEEE division per step", "alloc per step", "dot as multiply-and-sum", "shape sync"], (
        missed
    )
    # No estimate passes its stage's speed of light (test_limiter checks every opportunity against it).
    assert all(r["top_est"] < 1e5 for r in rows)
