"""Energy per run (NVML's energy counter): the Timer's energy windows with a fake counter on the CPU
path's logic, and how the report and the comparison print it. (On the GPU: docs/evidence/h100-clocks.)"""

import statistics

import pytest

from kprof_mcp.capture.timer import Timer, step_times
from kprof_mcp.models import ProfileRequest


class FakeTorch:
    class cuda:  # noqa: N801
        @staticmethod
        def synchronize():
            pass


def test_no_reader_or_the_cpu_reports_nothing():
    req = ProfileRequest(
        kernel="k", kernel_source="/x", version="v", params={}, mode="event", out_root="/tmp"
    )
    t = Timer(FakeTorch, True, req, "events", flush_buf=object())
    assert t.energy(lambda: None, None) == {}  # no NVML: nothing reported
    assert Timer(FakeTorch, False, req, "cpu").energy(lambda: None, lambda: 1.0) == {}  # the CPU: nothing


def test_the_report_and_the_summary_show_energy():
    import glob
    from pathlib import Path

    from kprof_mcp.engine import render_profile
    from kprof_mcp.models import ProfileResult
    from kprof_mcp.render.summary import profile_summary

    fix = Path(__file__).resolve().parents[1] / "fixtures" / "h100_event" / "vector_add"
    r = ProfileResult.model_validate_json(
        Path(glob.glob(str(fix / "*" / "*-v1" / "result.json"))[0]).read_text()
    )
    r.stages[0].timing = r.stages[0].timing.model_copy(
        update={"energy_mj_per_run": [31.2, 30.9, 31.5], "power_w": [402.0, 399.0, 405.0]}
    )
    rep = render_profile(r).report
    assert "Energy per run (mJ)" in rep and "31.200 [30.900–31.500]" in rep and "402 [399–405]" in rep
    s = profile_summary(r)
    assert s.stages[0].energy_mj_per_run == pytest.approx(31.2) and s.stages[0].power_w == pytest.approx(
        402.0
    )


@pytest.mark.alone  # a real clock and spinning runs: another test's load shifts the run rate between windows
def test_the_power_comes_from_the_counters_steps_and_the_energy_per_run_from_the_run_rate():
    """A real clock, a fake counter that steps every 20 ms by the energy of 500 W (NVML's steps are
    100 ms on an H100), runs of 0.5 ms of wall time: 500 W and 0.25 J per run, within the jitter of
    the poll. The window is the default 0.6 s: on a loaded 2-core machine the poll thread may read
    only every 20 ms or so, and 0.3 s windows then measured 471 W (a CI run at a576085)."""
    import time as _time

    req = ProfileRequest(
        kernel="k", kernel_source="/x", version="v", params={}, mode="event", out_root="/tmp"
    )
    t = Timer(FakeTorch, True, req, "events", flush_buf=object())
    t_origin = _time.perf_counter()

    def counter():  # mJ, whole 20 ms steps at 500 W
        _time.sleep(0.001)  # a read takes time
        return 500.0 * 1e3 * (int((_time.perf_counter() - t_origin) / 0.02) * 0.02)

    starts = []

    def run():
        starts.append(_time.perf_counter())
        end = starts[-1] + 0.0005
        while _time.perf_counter() < end:
            pass

    got = t.energy(run, counter, window_s=0.6, windows=2)
    assert got["power_w"] == pytest.approx([500.0, 500.0], rel=0.05)
    # 500 W x the time per run: ~0.5 ms, longer when this machine is loaded (a busy CPU stretches
    # the spin), so the run rate is the one this process achieved, from the runs' start times.
    # Each window's own rate: its runs are those before (after) the longest pause between two starts
    # (the window's end, the poll thread's stop and the next window's start).
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    cut = gaps.index(max(gaps)) + 1
    rates = [(w[-1] - w[0]) / (len(w) - 1) for w in (starts[:cut], starts[cut:])]
    assert all(0.0005 <= r < 0.01 for r in rates)
    assert got["energy_mj_per_run"] == pytest.approx([500.0 * r * 1e3 for r in rates], rel=0.1)


def test_a_step_seen_late_is_left_out_and_the_slope_fits_the_rest():
    """A counter stepping by 10 J every 100 ms, read every 5 ms (each read 1 ms), except that the
    scheduler held one poll back 60 ms across the step at 0.5 s: that step's span is 61 ms, far
    above the others' 6 ms, so it is dropped; every kept step's time is within 3 ms of the truth."""
    samples, t = [], 0.0
    while t < 1.0:
        if 0.47 < t < 0.53:  # the held-back poll
            t = 0.53
        samples.append((t, 10_000.0 * int((t + 0.0005) / 0.1), t + 0.001))
        t += 0.005
    steps = step_times(samples, 0.05, 0.95)
    assert [round(e) for _, e in steps] == [10_000 * k for k in (1, 2, 3, 4, 6, 7, 8, 9)]
    assert all(abs(ts - e / 1e5) <= 0.003 for ts, e in steps)
    assert statistics.linear_regression(*zip(*steps)).slope == pytest.approx(100_000.0, rel=0.01)
