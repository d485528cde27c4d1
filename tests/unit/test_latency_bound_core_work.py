"""CUDA-core work beyond the model in a latency-bound stage (analysis.diagnosis.catalogue.excess_core_work).

The thirty-second held-back set's softmax backward through each row's N x N Jacobian (H200, 2026-11-29): no
resource near its peak (L1 59 %, the FMA pipe 33 %), the warps' waits mostly their own instruction chains (memory
waits 28 % of their time), and 931x the model's FLOPs executed. The surplus instructions come with their waits:
T'/T = max(1/r, the uses below L1). Before: latency first at +182 % and the FMA pipe's work not named, against a
measured +7,996 %; now first at +10,374 %. Where the warps wait on memory or each other (an imbalance's idle SMs,
a lock) the branch stays silent: the third held-back set's imbalanced segments keep their tail first."""

from pathlib import Path

import pytest
from conftest import recorded_metrics

from kprof_mcp.analysis.diagnosis import opportunities
from kprof_mcp.analysis.diagnosis.catalogue import (
    INSTRUCTION_SIDE,
    MEMORY_WAIT_MIN_SHARE,
    excess_core_work,
    executed_flops,
    integer_ops,
)
from kprof_mcp.analysis.diagnosis.limiter import limiter

CAL = Path(__file__).resolve().parents[1] / "calibration"
JACOBIAN = next((CAL / "recorded-heldout32").glob("a_softmax_backward*")) / "bad.result.json"
IMBALANCE = CAL / "recorded-heldout3" / "imbalanced_segments" / "bad.result.json"


def test_the_surplus_instructions_of_a_latency_bound_stage_go_with_their_waits():
    m = recorded_metrics(JACOBIAN)
    lim = limiter(m)
    assert not lim.bound and m.accounting.memory_wait < MEMORY_WAIT_MIN_SHARE
    share, r = excess_core_work(m, lim)
    assert r == pytest.approx(((executed_flops(m) or 0) + (integer_ops(m) or 0)) / m.flops)
    below = max(u.util for u in lim.uses if u.key not in INSTRUCTION_SIDE)
    assert share == pytest.approx(1.0 - max(1.0 / r, below))
    top = opportunities(m)[0]
    assert top.cause == "move_work" and top.facts.resource == "fma" and top.facts.speedup == pytest.approx(r)


def test_a_latency_bound_stage_waiting_on_memory_is_left_to_its_own_causes():
    m = recorded_metrics(IMBALANCE)
    lim = limiter(m)
    assert not lim.bound and m.accounting.memory_wait >= MEMORY_WAIT_MIN_SHARE
    assert excess_core_work(m, lim) is None
    assert opportunities(m)[0].cause == "tail"
