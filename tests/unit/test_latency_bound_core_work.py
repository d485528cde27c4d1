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
    _level_keep,
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
    # the levels below L1 keep the model's bytes; their traffic beyond those goes with the instructions
    below = max(u.util * _level_keep(m, u.key, 1.0 / r) for u in lim.uses if u.key not in INSTRUCTION_SIDE)
    assert share == pytest.approx(1.0 - max(1.0 / r, below))
    assert below <= max(u.util for u in lim.uses if u.key not in INSTRUCTION_SIDE)
    top = opportunities(m)[0]
    assert top.cause == "move_work" and top.facts.resource == "fma" and top.facts.speedup == pytest.approx(r)


def test_a_latency_bound_stage_waiting_on_memory_is_left_to_its_own_causes():
    m = recorded_metrics(IMBALANCE)
    lim = limiter(m)
    assert not lim.bound and m.accounting.memory_wait >= MEMORY_WAIT_MIN_SHARE
    assert excess_core_work(m, lim) is None
    assert opportunities(m)[0].cause == "tail"


TRIDIAG = next((CAL / "recorded-heldout31").glob("tridiagonal_systems*")) / "bad.result.json"
WINDOW = next(CAL.glob("recorded-*/window_re_read_for_every_output")) / "bad.result.json"


def test_an_l1_bound_stage_fed_by_code_beyond_the_model_sheds_that_codes_loads_with_it():
    """The thirty-first held-back set's tridiagonal systems solved by dense Gauss-Jordan elimination (H200): the L1
    at 93.5 % of its peak, fed by the loads and stores of 1,724x the model's FLOPs in thread instructions. The
    instruction stream and the L1 traffic it issues go together: T'/T = max(1 - u(1 - 1/r), the uses below L1).
    Before: the L2's uncoalesced stores first at +35 %, the work not named, against a measured +8,115 %."""
    m = recorded_metrics(TRIDIAG)
    lim = limiter(m)
    assert lim.bound and lim.resource == "l1" and lim.util > 0.9
    share, r = excess_core_work(m, lim)
    assert r == pytest.approx(((executed_flops(m) or 0) + (integer_ops(m) or 0)) / m.flops)
    assert r > 1000 and share == pytest.approx(1.0 - (1.0 - lim.util * (1.0 - 1.0 / r)), rel=0.05)
    top = opportunities(m)[0]
    assert top.cause == "move_work" and top.facts.resource == "fma" and top.facts.metric == "l1"
    assert top.facts.bound_pct == pytest.approx(100.0 * lim.util)


def test_an_l1_bound_stage_whose_traffic_is_re_reads_is_left_to_the_re_read_what_if():
    """The window sum re-reading every input for every output: its L1 traffic is re-reads (the over-fetch at the
    L1 explains it, and takes the arithmetic done on the copies with it): not a second estimate of the same."""
    m = recorded_metrics(WINDOW)
    lim = limiter(m)
    assert lim.bound and lim.resource == "l1" and excess_core_work(m, lim) is not None
    opps = opportunities(m)
    assert opps[0].cause == "over_fetch" and not any(o.cause == "move_work" for o in opps)
