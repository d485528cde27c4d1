"""Event mode's kernel time on a GPU: each timed run's kernels found in a CUPTI trace by the
launch call's correlation id (tested on torch.profiler traces recorded on an H100), the clock
warning, and how the report shows the kernel time beside the launch-inclusive CUDA-event time."""

from pathlib import Path

import pytest
from conftest import unpacked

from kprof_mcp.analysis import timeline as T
from kprof_mcp.models import DeviceState, KernelTime, ProfileResult, Timing
from kprof_mcp.modes.event import CLOCK_MOVED_FRACTION, quality_warnings
from kprof_mcp.parsers import kineto
from kprof_mcp.render import render_report

FIX = Path(__file__).resolve().parents[1] / "fixtures"
H100 = FIX / "h100_timeline"
EVENT = FIX / "h100_event" / "vector_add" / "n=16777216_dtype=float32" / "20261122T043546.751072Z-v0"


def test_each_run_is_the_sum_of_the_kernels_its_launches_started():
    tr = kineto.load_trace(unpacked(H100 / "tiny_chain_v0" / "trace.json"))
    sums, spans, rows = T.kernels_per_iteration(tr)
    assert len(sums) == 5 and len(spans) == 5
    (row,) = rows
    assert row["name"] == "add_const_kernel" and row["launches_per_run"] == 200
    # The same kernels the timeline analysis attributes to the one stage, iteration by iteration.
    tl = T.analyze(tr, ["chain"])
    assert sums == pytest.approx(tl.stages[0]["gpu_time_ns_samples"])
    # 200 launches of a ~1.5 µs kernel: the span (launch-bound) is far longer than the kernel time.
    assert all(sp > 10 * s for s, sp in zip(sums, spans))
    assert row["total_median_ns"] == pytest.approx(sorted(sums)[2])


def test_work_launched_outside_the_run_ranges_is_not_counted():
    tr = kineto.load_trace(H100 / "two_streams_v1" / "trace.json")
    sums, _, rows = T.kernels_per_iteration(tr)
    # Two branches, each one launch of the same kernel.
    assert len(sums) == 5 and [(r["name"], r["launches_per_run"]) for r in rows] == [("poly_kernel", 2)]
    iters = tr.ranges[tr.ranges["name"] == T.ITER_RANGE].sort_values("start")
    # Drop the third run's range: its kernels were launched outside every range (as the L2
    # flush is) and must vanish from the sums, the others unchanged.
    tr.ranges = tr.ranges.drop(index=iters.index[2])
    sums4, _, _ = T.kernels_per_iteration(tr)
    assert sums4 == pytest.approx(sums[:2] + sums[3:])


def test_empty_trace_gives_nothing_rather_than_zeros():
    tr = kineto.load_trace(unpacked(H100 / "tiny_chain_v0" / "trace.json"))
    tr.kernels = tr.kernels.iloc[0:0]
    assert T.kernels_per_iteration(tr) == ([], [], [])


def _gpu() -> DeviceState:
    return DeviceState(kind="cuda", name="NVIDIA H100 80GB HBM3")


def _stage(result: ProfileResult, **timing) -> ProfileResult:
    s = result.stages[0]
    t = Timing(**{**s.timing.model_dump(include={"samples_ns", "l2_flushed", "stop_reason"}), **timing})
    return result.model_copy(update={"stages": [s.model_copy(update={"timing": t})]})


def test_clock_moving_during_timing_is_warned_and_steady_clocks_are_not():
    result = ProfileResult.model_validate_json((EVENT / "result.json").read_text())
    moved = _stage(result, method="cupti_kernel_sum", sm_clock_mhz=[1980.0, 1980.0, 1755.0])
    assert (1980 - 1755) / 1980 > CLOCK_MOVED_FRACTION
    w = [x for x in quality_warnings(_gpu(), moved.stages, None) if x.kind == "clocks" and x.stage]
    assert len(w) == 1 and "1755–1980 MHz" in w[0].message and w[0].stage == "add"
    steady = _stage(result, method="cupti_kernel_sum", sm_clock_mhz=[1980.0, 1965.0, 1980.0])
    assert not [x for x in quality_warnings(_gpu(), steady.stages, None) if x.kind == "clocks" and x.stage]


def test_resolution_warning_only_for_launch_inclusive_event_times():
    result = ProfileResult.model_validate_json((EVENT / "result.json").read_text())
    short = [3000.0] * 40
    ev = _stage(result, method="cuda_events", samples_ns=short)
    cu = _stage(result, method="cupti_kernel_sum", samples_ns=short)
    assert [x for x in quality_warnings(_gpu(), ev.stages, None) if x.kind == "resolution"]
    assert not [x for x in quality_warnings(_gpu(), cu.stages, None) if x.kind == "resolution"]


def test_report_shows_kernel_time_launch_inclusive_time_and_each_kernel():
    result = ProfileResult.model_validate_json((EVENT / "result.json").read_text())
    s = result.stages[0]
    launch = s.timing  # the recording's CUDA-event samples
    kernel = Timing(
        samples_ns=[v * 0.95 for v in launch.samples_ns],
        method="cupti_kernel_sum",
        l2_flushed=True,
        stop_reason="converged",
        sm_clock_mhz=[1980.0, 1980.0],
    )
    stage = s.model_copy(
        update={
            "timing": kernel,
            "launch_timing": launch,
            "kernel_times": [
                KernelTime(
                    name="add_kernel",
                    launches_per_run=1,
                    median_ns=kernel.median_ns,
                    total_median_ns=kernel.median_ns,
                )
            ],
        }
    )
    report = render_report(result.model_copy(update={"stages": [stage]}))
    rows = [line for line in report.splitlines() if line.startswith("| add")]
    assert any("cupti_kernel_sum" in r and "1980–1980" in r for r in rows)
    inclusive = [r for r in rows if "launch-inclusive" in r]
    assert len(inclusive) == 1 and "+5.3%" in inclusive[0] and "cuda_events" in inclusive[0]
    assert "Kernels of each stage (CUPTI" in report and "| add | add_kernel | 1 |" in report
    # The structured output carries both, and how the first was measured.
    from kprof_mcp.render.summary import profile_summary

    (st,) = profile_summary(result.model_copy(update={"stages": [stage]})).stages
    assert st.timing_method == "cupti_kernel_sum" and st.duration_us == pytest.approx(kernel.median_ns / 1e3)
    assert st.launch_inclusive_us == pytest.approx(launch.median_ns / 1e3) and st.sm_clock_mhz == [
        1980.0,
        1980.0,
    ]
    # The contract's duration is the kernel time, not the launch-inclusive one.
    assert f"{kernel.median_ns / 1e3:.2f}" in report.split("### Stages")[1].split("\n\n")[0]


def test_baseline_timed_with_cuda_events_is_flagged_against_a_cupti_profile():
    from kprof_mcp.render import render_contract

    old = ProfileResult.model_validate_json((EVENT / "result.json").read_text())
    assert old.stages[0].timing.method == "cuda_events"
    new = _stage(
        old, method="cupti_kernel_sum", samples_ns=[v * 0.95 for v in old.stages[0].timing.samples_ns]
    )
    contract = render_contract(new, old)
    assert (
        "timing methods differ (previous cuda_events; current cupti_kernel_sum): CUDA-event times include"
        in contract
    )
    assert "timing methods differ" not in render_contract(old, old)


# tiny_chain on an H100 (docs/evidence/h100-timing-truth, 2026-11-23, round 0): per run, CUPTI kernel
# time and the launch-inclusive CUDA-event time; v0 = 200 launches, v1 = 1, v2 = 200 in one CUDA graph.
TINY = {
    "v0": (210902.0, 2655711.9, 200.0, 1056.0),
    "v1": (1440.0, 4512.0, 1.0, 1440.0),
    "v2": (200085.5, 270272.0, 200.0, 992.0),
}


def _timed(version: str) -> ProfileResult:
    base = ProfileResult.model_validate_json((EVENT / "result.json").read_text())
    k, l, n, per = TINY[version]
    s = base.stages[0]
    t = lambda v, m: Timing(samples_ns=[v] * 40, method=m, l2_flushed=True, stop_reason="converged")  # noqa: E731
    stage = s.model_copy(
        update={
            "timing": t(k, "cupti_kernel_sum"),
            "launch_timing": t(l, "cuda_events"),
            "grid_blocks": 4,  # tiny_chain's n=4096 in blocks of 1024
            "kernel_times": [
                KernelTime(name="add_const_kernel", launches_per_run=n, median_ns=per, total_median_ns=k)
            ],
        }
    )
    return base.model_copy(update={"stages": [stage], "plan_total": None})


def test_event_mode_calls_a_chain_of_tiny_launches_launch_bound_and_ranks_that_first():
    from kprof_mcp.render import render_contract
    from kprof_mcp.render.diagnosis import assess

    a = assess(_timed("v0"))
    assert a.root_cause.kind == "launch_bound"
    top = a.opportunities[0]
    assert top.name.startswith("Cut launch overhead") and top.source == "timeline"
    # The share of the run the host adds: 1 − K/L, i.e. the run could be L/K − 1 faster.
    assert top.est_gain_pct == pytest.approx(100 * (2655711.9 / 210902.0 - 1), rel=0.01)
    # Kernel-level advice is a share of the run too: 4 blocks on 132 SMs would make the kernels
    # ~33x faster, but they are busy 7.9 % of the run, so it is worth ~8 %, ranked below.
    fill = next(o for o in a.opportunities if o.name.startswith("Fill the GPU"))
    assert fill.est_gain_pct == pytest.approx(
        100 * (1 / (1 - (1 - 4 / 132) * 210902.0 / 2655711.9) - 1), rel=0.02
    )
    contract = render_contract(_timed("v0"))
    assert (
        "launch-bound: GPU busy 7.9% of the window" in contract
        and "**Root cause**: The plan is launch-bound" in contract
    )
    # One launch per run (nothing to fuse), and 200 kernels replayed as one CUDA graph (GPU busy
    # 74 %): not launch-bound.
    for v in ("v1", "v2"):
        b = assess(_timed(v))
        assert b.root_cause.kind != "launch_bound" and not any(
            o.name.startswith("Cut launch") for o in b.opportunities
        )


def test_vs_baseline_gives_the_speedup_ci_from_both_profiles_samples():
    from kprof_mcp.render import render_contract

    old = ProfileResult.model_validate_json((EVENT / "result.json").read_text())
    faster = _stage(old, method="cuda_events", samples_ns=[v / 1.05 for v in old.stages[0].timing.samples_ns])
    text = render_contract(faster, old)
    assert (
        "speed-up 1.050 (95 % CI 1.0" in text
        and ", faster; bootstrap of the two profiles' raw samples" in text
    )
    assert ", no significant difference; bootstrap" in render_contract(old, old)
    # Different timing methods: no CI (the note says the methods differ instead).
    assert (
        "speed-up"
        not in render_contract(_stage(old, method="cupti_kernel_sum"), old).split("### vs Baseline")[1]
    )


def test_no_gain_makes_a_launch_shorter_than_an_empty_kernel():
    """tiny_chain v1: one 1.44 µs kernel of 4 blocks. Without a floor the model promised 'Fill the
    GPU' +3200 %; on the H100 the same kernel on 132 blocks took 1.15 µs vs 1.06 µs on 4 (slower),
    and an empty kernel 0.83 µs (docs/evidence/h100-timing-truth/h100_kernel_floor.py). The gap to
    that floor caps it."""
    from kprof_mcp.devices import match_device
    from kprof_mcp.render.diagnosis import assess

    r = _timed("v1")
    # tiny_chain's model at n=4096 fp32: one add per element, read and write once.
    r = r.model_copy(
        update={"stages": [r.stages[0].model_copy(update={"flops": 4096.0, "bytes_model": 32768.0})]}
    )
    unbounded = assess(r).opportunities[0]
    assert unbounded.name.startswith("Fill the GPU") and unbounded.est_gain_pct > 1000
    floor = match_device("NVIDIA H100 80GB HBM3").min_kernel_ns
    assert floor == 830
    s = r.stages[0].model_copy(update={"min_kernel_ns": floor})
    capped = assess(r.model_copy(update={"stages": [s]}))
    top = capped.opportunities[0]
    assert top.est_gain_pct == pytest.approx(100 * (1440.0 / 830 - 1), rel=0.02)  # headroom 1 - 0.83/1.44


def test_batches_timed_while_throttled_are_set_aside_when_clocks_are_free():
    """Clocks left free: a batch whose SM clock read below 75 % of the maximum is left out (nvbench's
    rule), counted, and kept only if the budget runs out (fake clocks, the CPU timer)."""
    from kprof_mcp.capture.timer import Timer
    from kprof_mcp.models import ProfileRequest

    req = ProfileRequest(
        kernel="k",
        kernel_source="/x",
        version="v",
        params={},
        mode="event",
        out_root="/tmp",
        min_runs=5,
        budget_ms=1000,
        warmup_ms=0,
        target_rel_iqr=1e9,  # any spread converges: five CPU-timed no-ops on a loaded machine vary a lot
    )
    readings = iter([1000.0, 1980.0, 1980.0, 1980.0])
    t = Timer(None, False, req, "cpu", clock_reader=lambda: next(readings))
    t.throttle_below_mhz = 0.75 * 1980
    timing = t.time(lambda: None)
    assert t.dropped_batches == 1 and t.dropped_runs == 5  # the first batch (1000 MHz) set aside
    assert timing.runs == 5 and timing.sm_clock_mhz[:2] == [1000.0, 1980.0]
    # Every batch throttled and the budget gone: the samples are kept, not lost.
    req2 = req.model_copy(update={"budget_ms": 0.0})
    t2 = Timer(None, False, req2, "cpu", clock_reader=lambda: 900.0)
    t2.throttle_below_mhz = 0.75 * 1980
    timing2 = t2.time(lambda: None)
    assert timing2.runs >= 5 and t2.dropped_runs == 0


def test_compute_bound_stages_at_free_clocks_are_not_normalised_and_it_says_why():
    """matmul (bf16 4096^3, compute-bound by its model) and vector_add (memory-bound), both recorded
    on the H100 with clocks free: only the GEMM gets the warning; locked clocks get none."""
    import glob

    mm = ProfileResult.model_validate_json(
        Path(glob.glob(str(FIX / "h100_event" / "matmul" / "*" / "*-v1" / "result.json"))[0]).read_text()
    )
    va = ProfileResult.model_validate_json((EVENT / "result.json").read_text())
    assert mm.stages[0].roofline_region == "compute" and va.stages[0].roofline_region == "memory"

    def warned(stages, locked=False):
        dev = _gpu().model_copy(update={"clocks_locked": locked})
        return [
            x
            for x in quality_warnings(dev, stages, None)
            if x.kind == "clocks" and "compute-bound" in x.message
        ]

    (w,) = warned(mm.stages + va.stages)
    assert f"stage(s) {mm.stages[0].name} timed" in w.message and "not normalised" in w.message
    assert "compare_versions" in w.message
    assert not warned(va.stages) and not warned(mm.stages, locked=True)


class _SteadyTimer:
    """A Timer whose runs all take 1 ms and whose batches take 10 ms of wall time (no GPU)."""

    @staticmethod
    def make(use_cuda: bool, **req):
        import time as _time

        from kprof_mcp.capture.timer import Timer
        from kprof_mcp.models import ProfileRequest

        class T(Timer):
            batches = 0

            def _one_batch(self, fn, n):
                T.batches += 1
                _time.sleep(0.01)
                return [1e6] * n

        r = ProfileRequest(
            kernel="k", kernel_source="x", version="v0", params={}, out_root="/tmp", warmup_ms=0.0, **req
        )
        return T(None, use_cuda, r, "events" if use_cuda else "cpu", flush_buf=object()), T


def test_a_gpu_timing_is_not_stopped_by_agreeing_runs_before_its_window(monkeypatch):
    """Ten identical runs converge at once; on a GPU the Timer still times for min_window_ms
    (capped by the budget), since the clock state there outlasts a few runs (the default rule,
    without issue 40's opt-in early stop)."""
    monkeypatch.delenv("KPROF_TIMING_STOP", raising=False)
    t, T = _SteadyTimer.make(True, min_window_ms=150.0, budget_ms=2000.0)
    timing = t.time(lambda: None)
    assert (
        timing.stop_reason == "converged" and T.batches - 1 >= 10
    )  # 1 warm-up batch, >= 150 ms of 10 ms batches
    t, T = _SteadyTimer.make(True, min_window_ms=5000.0, budget_ms=100.0)  # the budget caps the window
    assert t.time(lambda: None).stop_reason == "converged" and T.batches - 1 < 30
    t, T = _SteadyTimer.make(False, min_window_ms=150.0)  # the CPU: no window
    assert t.time(lambda: None).stop_reason == "converged" and T.batches - 1 == 1
