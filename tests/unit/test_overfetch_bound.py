"""Over-fetch removed, the SMs' work stays (analysis.diagnosis.opportunities): the estimate is bounded by
the next limiter among the pipes and issue slots at the rate tuned kernels reach — on the third held-back
set's input-re-read-per-class recording (H100, 2026-11-26: DRAM bytes 8x the model, and the ALU 45 % busy
over the stage's time, which the re-reads do not explain)."""

from pathlib import Path

import pytest

from kprof_mcp.analysis.assessment import stage_metrics
from kprof_mcp.analysis.diagnosis import opportunities
from kprof_mcp.analysis.diagnosis.limiter import ATTAINABLE_PIPE, limiter
from kprof_mcp.analysis.machine_inputs import machine_for
from kprof_mcp.models import ProfileResult

BAD = Path(__file__).resolve().parents[1] / "calibration" / "recorded-heldout3" / "input_re_read_per_class"


def test_the_next_limiter_bounds_the_over_fetch_what_if():
    r = ProfileResult.model_validate_json((BAD / "bad.result.json").read_text())
    m = stage_metrics(r.stages[0], 1980.0, 1.0, r, machine_for(r))
    assert m.over_fetch_ratio > 7.5
    lim = limiter(m)
    alu = next(u.util for u in lim.uses if u.key == "alu")
    o = next(o for o in opportunities(m) if o.cause == "over_fetch")
    assert o.share == pytest.approx(1.0 - alu / ATTAINABLE_PIPE)  # not 1 - 1/8 of DRAM's time
