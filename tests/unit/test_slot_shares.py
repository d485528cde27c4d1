"""The issue slots' shares by the work's op class (analysis.diagnosis.limiter.slot_shares): the FMA pipe also
issues integer multiply-adds (IMAD), and where most of its instructions are not floating-point its slots are
integer work, the ALU's kind. On recorded H100 accounting: the held-back bucketize by a linear scan (8th set: the
FMA pipe's 469.6 M warp instructions carry no FP op at all) is integer work; the Fourier series of precise
sines (9th set: 59 % of the FMA pipe's instructions FP) and the polynomial of recomputed powers (19th set) stay
FP32 work."""

from pathlib import Path

import pytest

from kprof_mcp.analysis.assessment import stage_metrics
from kprof_mcp.analysis.diagnosis.limiter import issue_share, limiter, slot_shares, source_of_limit
from kprof_mcp.analysis.machine_inputs import machine_for
from kprof_mcp.models import ProfileResult

CAL = Path(__file__).resolve().parents[1] / "calibration"


def _metrics(glob: str):
    f = next(CAL.glob(glob))
    r = ProfileResult.model_validate_json(f.read_text())
    return stage_metrics(r.stages[0], 1980.0, 1.0, r, machine_for(r))


def test_a_fma_pipe_issuing_integer_work_is_integer_work():
    m = _metrics("recorded-heldout8/bucket_index_by_a_linear_scan*/bad.result.json")
    lim = limiter(m)
    assert lim.resource == "issue" and lim.bound
    raw = {u.key: issue_share(m, u.key, u.util) for u in lim.uses if u.key in ("fma", "alu")}
    assert (
        raw["fma"] > raw["alu"]
    )  # by pipe: the FMA pipe takes more slots (47.6 % x 4 vs 78.9 % x 2 a clock)
    a = m.accounting
    assert sum(a.op_counts.get(c, 0.0) for c in ("ffma", "fmul", "fadd")) == 0.0
    shares = slot_shares(m, lim)
    assert "fma" not in shares and shares["alu"] == pytest.approx(raw["fma"] + raw["alu"])
    assert source_of_limit(m, lim) == "alu"


@pytest.mark.parametrize(
    "glob",
    [
        "recorded-heldout9/a_sine_and_a_cosine_per_harmonic*/bad.result.json",
        "recorded-heldout19/a_polynomial_evaluated*/bad.result.json",
    ],
)
def test_a_fma_pipe_issuing_mostly_fp_work_stays_fp32_work(glob):
    m = _metrics(glob)
    lim = limiter(m)
    shares = slot_shares(m, lim)
    assert shares["fma"] == pytest.approx(issue_share(m, "fma", lim.use("fma")))
    assert source_of_limit(m, lim) == "fma"
