"""The model's integer operations (StageModel.int_ops, issue 36): an integer kernel's FLOPs are none, so without a
statement of the integer and logic operations its work needs, its ALU work had no model to be beyond and the
diagnosis could only say "near the ALU's roof" (the 35th held-back set's gcd by Euclid's subtraction form: the
ALU pipe 83 % busy, compute roof first at +14 % for a measured +3,213 %). With int_ops the excess core-work
what-if weighs the ALU's executed integer ops against it (catalogue.core_model)."""

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import recorded_metrics

from kprof_mcp.analysis.diagnosis import opportunities
from kprof_mcp.analysis.diagnosis.catalogue import INSTRUCTION_SIDE, core_model, core_work, excess_core_work
from kprof_mcp.analysis.diagnosis.limiter import limiter
from kprof_mcp.child.harness import _static
from kprof_mcp.kernel import StageModel

CAL = Path(__file__).resolve().parents[1] / "calibration"
GCD = next((CAL / "recorded-heldout35").glob("greatest_common_divisors*")) / "bad.result.json"


def test_a_stage_model_s_integer_operations_reach_the_result():
    stage = SimpleNamespace(name="s", grid_blocks=8)
    dev = SimpleNamespace(sm_count=132)
    params = {"L": 1000, "dtype": "int32"}
    with_ops = StageModel("s", lambda p: 0.0, lambda p: 12.0 * p["L"], int_ops=lambda p: 450.0 * p["L"])
    without = StageModel("s", lambda p: 0.0, lambda p: 12.0 * p["L"])
    assert _static(stage, with_ops, params, dev, None, None, None)["int_ops"] == 450_000.0
    assert _static(stage, without, params, dev, None, None, None)["int_ops"] is None


def test_an_integer_kernel_s_alu_work_beyond_its_integer_model_is_named_and_weighed():
    m = recorded_metrics(GCD)
    assert not m.flops and m.int_ops is None  # recorded before int_ops: read as None
    lim = limiter(m)
    assert lim.bound and lim.resource == "alu"
    assert excess_core_work(m, lim) is None and opportunities(m)[0].cause == "compute_roof"
    # The design's needed work (its package's docstring): the remainder form's 18 steps a pair, ~25 integer
    # instructions a step, for its 131,072 pairs.
    m2 = replace(m, int_ops=18 * 25 * 131072.0)
    executed = core_work(m2)["alu"]
    assert core_model(m2)["alu"] == m2.int_ops and core_model(m2)["fma"] == 0.0
    share, r = excess_core_work(m2, limiter(m2))
    assert r == pytest.approx(executed / m2.int_ops) and r > 30
    # T'/T = max(1 - u(1 - 1/r), the largest use after): the instruction side x 1/r, the rest stays (here the
    # busiest L2 slice, 36.5 % of its peak, not the instruction stream's)
    after = max(u.util * (1.0 / r if u.key in INSTRUCTION_SIDE else 1.0) for u in lim.uses)
    assert share == pytest.approx(1.0 - max(1.0 - lim.util * (1.0 - 1.0 / r), after), rel=0.02)
    top = opportunities(m2)[0]
    assert top.cause == "move_work" and top.facts.resource == "alu" and top.facts.speedup == pytest.approx(r)
