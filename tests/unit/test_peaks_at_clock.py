"""Issue 37 item 3 everywhere a % of a peak is shown: the summary JSON, report.md's '% peak FLOP/s' and
'% of roofline', Nsight Compute's own clock, and the compute% a tuned kernel reaches without counters
(75 % of the boost-clock peak with clocks free, 95 % of the peak at the clock read under kprof's lock).
Built from recorded H100 results with the clocks set, as test_suspect.py does."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from kprof_mcp.analysis.assessment import assess as assess_raw
from kprof_mcp.analysis.peaks import ROOFLINE_COMPUTE_ATTAINABLE_LOCKED_PCT, at_clock, max_sm_mhz, peak_mhz
from kprof_mcp.models import ProfileResult
from kprof_mcp.render.report import render_report
from kprof_mcp.render.summary import profile_summary

TESTS = Path(__file__).resolve().parents[1]
EVENT = TESTS / "fixtures" / "h100_event"


def _load(p: Path | str) -> ProfileResult:
    return ProfileResult.model_validate_json(Path(p).read_text())


def _matmul() -> ProfileResult:
    return _load(glob.glob(str(EVENT / "matmul" / "*" / "*-v1" / "result.json"))[0])


def _vector_add() -> ProfileResult:
    return _load(glob.glob(str(EVENT / "vector_add" / "*" / "*-v0" / "result.json"))[0])


def _at(r: ProfileResult, mhz: float, lock: int | None = None) -> ProfileResult:
    s = r.stages[0]
    t = s.timing.model_copy(update={"sm_clock_mhz": [mhz] * 5})
    dev = r.device.model_copy(update={"sm_clock_lock_mhz": lock, "clocks_locked": lock is not None})
    return r.model_copy(update={"stages": [s.model_copy(update={"timing": t})], "device": dev})


def _roofline_row(report: str, stage: str) -> list[str]:
    lines = report.split("## Roofline", 1)[1].splitlines()
    return next(
        [c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines if ln.startswith(f"| {stage} |")
    )


def test_report_roofline_columns_at_the_clock_with_the_boost_figure_beside():
    r = _matmul()
    s = r.stages[0]
    boost = peak_mhz(r, s)  # the clock its datasheet peak is quoted at (bf16 tensor: 1830 MHz on an H100 SXM)
    assert s.roofline_region == "compute"  # its roof is the FLOP peak: scaled by the clock
    row = _roofline_row(render_report(_at(r, 1600.0)), "matmul")
    flops_at, roof_at = s.pct_peak_flops * boost / 1600.0, s.pct_of_roofline * boost / 1600.0
    assert row[7] == f"{flops_at:.1f} at 1600 MHz ({s.pct_peak_flops:.1f} at boost)"
    assert row[10] == f"{roof_at:.1f} at 1600 MHz ({s.pct_of_roofline:.1f} at boost)"
    # At the boost clock (no reading, or one at the maximum): the one figure.
    assert _roofline_row(render_report(r), "matmul")[10] == f"{s.pct_of_roofline:.1f}"


def test_a_memory_bound_roof_is_not_scaled_by_the_sm_clock():
    r = _vector_add()
    s = r.stages[0]
    assert s.roofline_region == "memory"
    row = _roofline_row(render_report(_at(r, 1305.0)), "add")
    assert (
        row[8] == f"{s.pct_peak_bandwidth:.1f}" and row[10] == f"{s.pct_of_roofline:.1f}"
    )  # no MHz: same figure
    assert "at 1305 MHz" in row[7]  # its (tiny) FLOP figure is against the FP32 peak at that clock


def test_summary_json_at_the_clock_with_the_nominal_beside():
    r = _at(_matmul(), 1600.0)
    s = r.stages[0]
    boost = peak_mhz(r, s)  # the clock its datasheet peak is quoted at (bf16 tensor: 1830 MHz on an H100 SXM)
    (st,) = profile_summary(r).stages
    assert st.sm_clock_mhz_ran == 1600.0
    assert st.pct_peak_flops == pytest.approx(s.pct_peak_flops * boost / 1600.0)
    assert st.pct_peak_flops_nominal == pytest.approx(s.pct_peak_flops)
    assert st.pct_of_roofline == pytest.approx(s.pct_of_roofline * boost / 1600.0)
    assert st.pct_peak_bandwidth == pytest.approx(s.pct_peak_bandwidth)
    free = profile_summary(_matmul()).stages[0]  # no clock read: the datasheet figure, nothing beside it
    assert free.sm_clock_mhz_ran is None and free.pct_peak_flops_nominal is None
    assert free.pct_peak_flops == pytest.approx(s.pct_peak_flops)


def test_summary_json_gives_no_figure_above_100():
    r = _vector_add()
    s = r.stages[0]
    cached = r.model_copy(
        update={
            "stages": [
                s.model_copy(update={"timing": s.timing.model_copy(update={"samples_ns": [3170.0] * 30})})
            ]
        }
    )
    assert cached.stages[0].pct_peak_bandwidth > 100.0
    (st,) = profile_summary(cached).stages
    assert st.bottleneck == "suspect" and st.pct_peak_bandwidth is None and st.pct_of_roofline is None


def test_nsight_compute_percentages_are_at_its_own_clock():
    """ncu locks the SM clock to base (--clock-control base): the FLOP figure is at the clock it measured."""
    r = _load(TESTS / "calibration" / "recorded" / "library__matmul_v0_v3" / "good.result.json")
    s = r.stages[0]
    c = at_clock(s, max_sm_mhz(r))
    assert s.sm_clock_hz and c.clock_mhz == pytest.approx(s.sm_clock_hz / 1e6)
    assert c.pct_peak_flops == pytest.approx(s.pct_peak_flops * max_sm_mhz(r) * 1e6 / s.sm_clock_hz)
    assert c.pct_peak_flops <= 100.0
    assert f"at {c.clock_mhz:.0f} MHz" in _roofline_row(render_report(r), s.name)[7]


def test_attainable_compute_without_counters_depends_on_the_clock_lock():
    """Free clocks: 75 % of the peak (the clock read is the boost one while a GEMM runs lower). Under
    kprof's lock the clock read is the one it ran: a tuned GEMM reaches 95 % of the peak at that clock."""
    free = assess_raw(_at(_matmul(), 1980.0)).stages[0].metrics
    assert free.compute_attainable_pct == 75.0
    locked = assess_raw(_at(_matmul(), 1305.0, lock=1305)).stages[0].metrics
    assert locked.compute_attainable_pct == ROOFLINE_COMPUTE_ATTAINABLE_LOCKED_PCT == 95.0
    # A reading under the maximum without a lock (a throttled batch) is not trusted to be the clock it ran.
    assert assess_raw(_at(_matmul(), 1600.0)).stages[0].metrics.compute_attainable_pct == 75.0
