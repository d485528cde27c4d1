"""Issue 37 item 1: no impossible figure printed as a result. A stage with no kernel recorded in its timed
runs, or whose model over its time passes a device peak, is ``suspect``: its key issue says why, no
opportunity ranks on it, no percentage of a peak above 100 % is printed, and no baseline verdict is given."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kprof_mcp.analysis.baseline import against
from kprof_mcp.analysis.peaks import NO_KERNEL, SUSPECT, suspect_reasons
from kprof_mcp.models import ProfileResult, ResultWarning
from kprof_mcp.render.contract import render_contract
from kprof_mcp.render.diagnosis import assess
from kprof_mcp.render.report import render_report

TESTS = Path(__file__).resolve().parents[1]
EVENT = (
    TESTS
    / "fixtures"
    / "h100_event"
    / "vector_add"
    / "n=16777216_dtype=float32"
    / "20261122T043546.751072Z-v0"
)
# A percentage said of a peak ("1895.8% of peak", "61.7 % of tensor peak", "% of peak DRAM BW").
PCT = re.compile(r"(\d+(?:\.\d+)?)\s*%\s*of\s+(?:the\s+)?(?:[\w/()-]+\s+){0,3}?peak", re.I)


def _load(p: Path) -> ProfileResult:
    return ProfileResult.model_validate_json(p.read_text())


def _cached() -> ProfileResult:
    """The recorded vector add with 3.17 µs, far shorter than its bytes allow (a cached output)."""
    r = _load(EVENT / "result.json")
    s = r.stages[0]
    t = s.timing.model_copy(update={"samples_ns": [3170.0] * 30})
    return r.model_copy(update={"stages": [s.model_copy(update={"timing": t})]})


def _no_kernel() -> ProfileResult:
    """As recorded before ``Timing.kernel_recorded`` existed: only the fallback's warning says no kernel was
    recorded (test_kernel_recorded.py tests the field)."""
    r = _cached()
    w = ResultWarning(
        kind="timing",
        message="kernel time not measured (CUPTI saw kernels in 0 of 30 runs (a run launched no kernel, or "
        "launches could not be matched to runs)); stage times are CUDA events around each launch, which "
        "include launch latency (a few µs)",
    )
    s = r.stages[0]
    t = s.timing.model_copy(update={"samples_ns": [3170.0] * 30, "method": "cuda_events"})
    return r.model_copy(update={"warnings": [*r.warnings, w], "stages": [s.model_copy(update={"timing": t})]})


def _over_100(text: str) -> list[str]:
    """Lines printing a percentage of a device peak above 100 %: in words, or in the Stages table's
    TC% and DRAM% columns (the contract) and the Roofline table's % columns (the report)."""
    out, cols = [], []
    for ln in text.splitlines():
        cells = [c.strip() for c in ln.strip().strip("|").split("|")] if ln.startswith("|") else []
        if cells and ("TC%" in cells or "% peak FLOP/s" in cells or any("peak" in c.lower() for c in cells)):
            cols = [i for i, c in enumerate(cells) if c in ("TC%", "DRAM%") or "peak" in c.lower()]
            continue
        if not cells:
            cols = []
        figures = [float(m) for m in PCT.findall(ln)]
        for i in cols:
            if i < len(cells) and re.fullmatch(r"\d+(?:\.\d+)?", cells[i]):
                figures.append(float(cells[i]))
        if any(f > 100.0 for f in figures):
            out.append(ln)
    return out


def test_recorded_stage_is_not_suspect():
    r = _load(EVENT / "result.json")
    assert suspect_reasons(r) == {}
    assert assess(r).bottleneck != SUSPECT


def test_over_peak_is_suspect_with_no_figure_above_100():
    r = _cached()
    a = assess(r)
    assert a.bottleneck == SUSPECT and a.main.key_issue.kind == "suspect"
    assert "DRAM bandwidth" in a.main.key_issue.values["reason"]
    assert not [o for o in a.opportunities if o.stage == "add"]
    contract = render_contract(r)
    assert "| suspect |" in contract and "work skipped, cached" in contract
    assert "None triggered" not in contract
    assert _over_100(contract) == []
    assert "n/a (over peak)" in render_report(r)
    assert _over_100(render_report(r)) == []


def test_no_kernel_recorded_is_suspect():
    r = _no_kernel()
    a = assess(r)
    assert a.bottleneck == SUSPECT
    assert NO_KERNEL in a.main.key_issue.values["reason"]
    assert not [o for o in a.opportunities if o.stage == "add"]
    assert NO_KERNEL in render_contract(r)


@pytest.mark.parametrize("make", [_cached, _no_kernel])
def test_baseline_verdict_refused(make):
    honest = _load(EVENT / "result.json")
    vs = against(make(), honest)
    assert vs.refused and "suspect" in vs.refused and vs.whole is None and vs.stages == ()
    assert against(honest, honest).refused is None


RECORDED = sorted(
    [*TESTS.glob("calibration/recorded*/**/*.result.json"), *TESTS.glob("fixtures/**/result.json")]
)


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: str(p.relative_to(TESTS)))
def test_no_contract_prints_a_peak_above_100_unless_suspect(path):
    try:
        r = _load(path)
    except Exception:
        pytest.skip("not a ProfileResult")
    a = assess(r)
    suspect = {sa.stage.name for sa in a.stages if sa.diagnosis and sa.diagnosis.bottleneck == SUSPECT}
    for ln in _over_100(render_contract(r, assessment=a)):
        assert any(f"| {n} |" in ln for n in suspect), ln


def test_clock_ratio_uses_the_clock_event_mode_read():
    """Issue 37 item 3: without Nsight Compute's clock, the median of the SM clocks read per timed batch."""
    from kprof_mcp.analysis.peaks import clock_ratio, ran_at_mhz

    r = _load(EVENT / "result.json")
    s = r.stages[0]
    assert ran_at_mhz(s) is None and clock_ratio(s, 1980.0) == 1.0
    t = s.timing.model_copy(update={"sm_clock_mhz": [1305.0, 1305.0, 1290.0, 1980.0, 1305.0]})
    locked = s.model_copy(update={"timing": t})
    assert ran_at_mhz(locked) == 1305.0
    assert clock_ratio(locked, 1980.0) == pytest.approx(1305.0 / 1980.0)


def test_key_issue_at_the_clock_the_stage_ran():
    """matmul in event mode at 1600 MHz: its % of tensor peak is at 1600 MHz, the boost-clock
    figure beside it."""
    import glob

    from kprof_mcp.analysis.peaks import peak_mhz

    path = glob.glob(str(TESTS / "fixtures" / "h100_event" / "matmul" / "*" / "*-v1" / "result.json"))[0]
    r = _load(Path(path))
    s = r.stages[0]
    boost = peak_mhz(r, s)  # the clock its datasheet peak is quoted at (bf16 tensor: 1830 MHz on an H100 SXM)
    nominal = s.pct_peak_flops
    t = s.timing.model_copy(update={"sm_clock_mhz": [1600.0] * 5})
    r = r.model_copy(update={"stages": [s.model_copy(update={"timing": t})]})
    ki = assess(r).main.key_issue
    assert ki.values["clock_mhz"] == 1600.0
    assert ki.values["pct_peak_flops"] == pytest.approx(nominal * boost / 1600.0)
    text = render_contract(r)
    assert f"% of tensor peak at 1600 MHz ({nominal:.1f}% of the boost-clock peak)" in text
    assert f"at 1600 MHz ({nominal:.1f} at boost)" in render_report(r)
