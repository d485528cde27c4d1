"""A timeline stage whose kernels include pure copies (a layout round trip): the fusion what-if drops
the copies and keeps the measured time of the kernels that do the work (analysis.machine_inputs.
copy_share, analysis.diagnosis.opportunities), on the second held-back set's layout-round-trip
recordings (H100, 2026-11-25) and the unfused chain (no copies: the roofline what-if, unchanged)."""

import json
from pathlib import Path

import pytest

from kprof_mcp.analysis.assessment import stage_metrics
from kprof_mcp.analysis.diagnosis import opportunities
from kprof_mcp.analysis.machine_inputs import copy_share, machine_for
from kprof_mcp.models import ProfileResult

CAL = Path(__file__).resolve().parents[1] / "calibration"
LAYOUT = CAL / "recorded-heldout2" / "layout_round_trip_per_layer"


def _result(path: Path) -> ProfileResult:
    return ProfileResult.model_validate_json(path.read_text())


def _fusion(r: ProfileResult):
    s = r.stages[0]
    m = stage_metrics(s, None, 1.0, r, machine_for(r))
    return m, next(o for o in opportunities(m) if o.cause == "fusion")


def test_the_layout_round_trip_s_copies_are_its_fusion_estimate():
    r = _result(LAYOUT / "bad.result.json")
    share = copy_share(r.stages[0], r)
    # nsys' kernel summary: 176 direct_copy launches, 50.7 ms of 61.0 ms of kernel time.
    assert share == pytest.approx(50685777.0 / (50685777.0 + 10317290.0))
    m, o = _fusion(r)
    assert o.facts.copy_share == pytest.approx(share)
    assert 1.0 - o.share == pytest.approx(max(m.attainable_sol_ns / m.time_ns, 1.0 - share), rel=1e-3)
    gain = json.loads((LAYOUT.parent / "measured.json").read_text())["pairs"]["layout round trip per layer"][
        "measured_gain_pct"
    ]
    assert 0.5 <= o.est_gain_pct / gain <= 2.0  # +491 % for +600 % measured


def test_the_fix_has_no_copy_kernels():
    r = _result(LAYOUT / "good.result.json")
    assert copy_share(r.stages[0], r) is None


def test_a_chain_without_copies_keeps_the_roofline_what_if():
    r = _result(CAL / "recorded-accounting" / "unfused_chain" / "bad.result.json")
    assert copy_share(r.stages[0], r) is None
    m, o = _fusion(r)
    assert o.facts.copy_share is None and o.facts.time_over_roof == pytest.approx(
        m.time_ns / m.attainable_sol_ns
    )


def test_a_concatenation_only_copies_too():
    """PyTorch's cat/stack kernel (``CatArrayBatchedCopy``) moves data and computes nothing: the thirty-third
    held-back set's gradient norm over one concatenated fp32 copy of the gradients — 49 casting copies (52.7 % of
    the kernel time), the concatenation (32.1 %) and the norm (15.2 %) — drops both kinds of copy, the norm's
    measured time kept: +558 % for +557 % measured on an H200 (the casting copies alone said +112 %)."""
    pair = next((CAL / "recorded-heldout33").glob("the_global_gradient_norm*"))
    r = _result(pair / "bad.result.json")
    assert copy_share(r.stages[0], r) == pytest.approx(0.848, abs=0.002)
    _, o = _fusion(r)
    assert 500.0 < o.est_gain_pct < 620.0
