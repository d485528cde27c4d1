"""Over-fetch removed, the SMs' work stays (analysis.diagnosis.opportunities): the estimate is bounded by the next
limiter among the pipes and issue slots at the rate tuned kernels reach, all but the arithmetic done on the surplus
data beyond the stage's FLOP model, which goes with it as in the re-read what-if (catalogue.core_keeps); the loads
(LSU) and every level stay.

On the third held-back set's input re-read once per class (H100, 2026-11-26): DRAM at 85 % moving 8x the model's
bytes, the issue slots and the ALU at 44-45 %, 41x the model's operations executed (integer address work and the
FP adds of every class's pass). Kept whole, the ALU's use bounded the estimate at +111 % for a measured +236 %
(until 2026-11-29 15:45 UTC); with the surplus arithmetic gone, the loads bound it: +264 %."""

from pathlib import Path

import pytest

from kprof_mcp.analysis.assessment import stage_metrics
from kprof_mcp.analysis.diagnosis import opportunities
from kprof_mcp.analysis.diagnosis.catalogue import core_keeps
from kprof_mcp.analysis.diagnosis.limiter import ATTAINABLE, ATTAINABLE_PIPE, PIPES, limiter
from kprof_mcp.analysis.machine_inputs import machine_for
from kprof_mcp.models import ProfileResult

BAD = Path(__file__).resolve().parents[1] / "calibration" / "recorded-heldout3" / "input_re_read_per_class"


def test_the_next_limiter_bounds_the_over_fetch_what_if_less_the_arithmetic_on_the_surplus_data():
    r = ProfileResult.model_validate_json((BAD / "bad.result.json").read_text())
    m = stage_metrics(r.stages[0], 1980.0, 1.0, r, machine_for(r))
    assert m.over_fetch_ratio > 7.5
    lim = limiter(m)
    keeps = core_keeps(m)
    assert set(keeps) >= {"issue", "alu"} and max(keeps.values()) < 0.2  # 5x-40x the model's work there

    def bound(keep: dict) -> float:
        rest = [
            u.util * keep.get(u.key, 1.0) / ATTAINABLE.get(u.key, ATTAINABLE_PIPE)
            for u in lim.uses
            if u.key in (*PIPES, "issue")
        ]
        return 1.0 - max(rest)

    o = next(o for o in opportunities(m) if o.cause == "over_fetch")
    assert o.facts.resource == "dram" and o.share == pytest.approx(bound(keeps))  # not 1 - 1/8 of DRAM's time
    alu = next(u.util for u in lim.uses if u.key == "alu")
    assert bound({}) == pytest.approx(1.0 - alu / ATTAINABLE_PIPE)  # kept whole, the ALU's use bounded it
    assert o.share > bound({}) + 0.1
    assert o.est_gain_pct == pytest.approx(263.5, rel=0.02)  # measured +235.6 %
