"""FMUL and FADD pairs → FFMA (machines.json's ``fmul_fadd_to_ffma``; analysis.diagnosis.moves._contraction_move):
an FFMA does a multiply and an add in one FMA-pipe op at the rate of an FMUL or FADD, so FP32 work issued one
FLOP per op takes up to twice the slots it needs. On the held-back polynomial recording (H100, 2026-11-27: each
power of x formed from scratch, 300 FMUL an element, issue slots at 98.6 % of peak), which before the move was
told nothing at all; and not where the FMUL/FADD ops are few or a memory level limits."""

import dataclasses
from pathlib import Path

import pytest
from conftest import recorded_metrics

from kprof_mcp.analysis.diagnosis import moves, opportunities
from kprof_mcp.analysis.diagnosis.limiter import limiter

CAL = Path(__file__).resolve().parents[1] / "calibration"
POLY = (
    CAL
    / "recorded-heldout19"
    / "a_polynomial_evaluated_with_each_power_of_x_computed_from_scratch_where_Horner_s_rule_serves"
    / "bad.result.json"
)


def _move(m):
    mv = next(x for x in m.machine.moves if x.key == "fmul_fadd_to_ffma")
    return mv, moves._contraction_move(m, mv, limiter(m))


def test_the_polynomial_s_multiplies_fold_into_multiply_adds():
    m = recorded_metrics(POLY)
    a = m.accounting
    lim = limiter(m)
    assert lim.resource == "issue" and lim.bound
    mv, (share, facts) = _move(m)
    # By hand: FMUL 10.07 G + FADD 4.2 M thread ops, half of them go: 5.035 G of 534.0 M x 32 issued (29.5 %);
    # the issue slots at 98.6 % lose that share, T' = T (1 - 0.986 x 0.295): +41 %. Measured fix (Horner's rule,
    # 25 FMAs an element): +549 %: it also cuts the FLOPs, which no counter tells from needed work.
    gone = 0.5 * (a.op_counts["fmul"] + a.op_counts["fadd"])
    assert facts["value"] == pytest.approx(100.0 * gone / (a.inst_executed * 32.0))
    assert share == pytest.approx(lim.util * gone / (a.inst_executed * 32.0), rel=1e-6)
    assert 1.0 / (1.0 - share) - 1.0 == pytest.approx(0.41, abs=0.01)
    assert facts["resource"] == "fma" and facts["move"] == "fmul_fadd_to_ffma" and facts["speedup"] == 2.0
    # before this move the recording was told nothing at all: now opportunity 1
    ranked = opportunities(m)
    assert ranked[0].cause == "move_work" and ranked[0].facts.move == "fmul_fadd_to_ffma"


def test_few_single_flop_ops_or_a_memory_limit_offer_nothing():
    m = recorded_metrics(POLY)
    a = m.accounting
    few = dataclasses.replace(
        a, op_counts={**a.op_counts, "fmul": 0.05 * a.inst_executed * 32.0, "fadd": 0.0}
    )
    m_few = dataclasses.replace(m, accounting=few)
    assert _move(m_few)[1] is None
    # the gate is the FMA pipe's work limiting the stage: a DRAM-bound two-pass variance whose FMUL and FADD are
    # 72 % of its issued thread instructions is not this move's
    var = next((CAL / "recorded-heldout14").glob("a_variance_computed_in_two_passes*/bad.result.json"))
    mm = recorded_metrics(var)
    a2 = mm.accounting
    assert limiter(mm).resource == "dram"
    assert a2.op_counts["fmul"] + a2.op_counts["fadd"] > 0.5 * a2.inst_executed * 32.0
    assert _move(mm)[1] is None
