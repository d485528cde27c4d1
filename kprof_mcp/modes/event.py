"""``event``: each stage timed alone, L2 flushed before every run, in batches until the
spread is small or a budget is spent; raw samples kept.

On a GPU the primary figure is the kernels' own time, from CUPTI activity records (Kineto via
``torch.profiler``): per run, the sum of the durations of the kernels the stage launched — what
Nsight Systems reports as kernel duration. CUDA events around each run are recorded beside it
(``launch_timing``): they add launch latency and event overhead (on an H100, +6 % on a 180 µs
GEMM, +5 % on a 70 µs add). Kineto rather than NVIDIA's ``cupti-python``: it comes with torch,
which every kernel package already needs, and it is the engine the timeline mode reads, so the
two modes share one trace reader. Without a GPU the wall clock times the Triton interpreter
(CPU timing, labelled as such)."""

from __future__ import annotations

from ..capture.timer import (  # noqa: F401  (L2_FLUSH_BYTES, CuptiUnavailable re-exported)
    L2_FLUSH_BYTES,
    CuptiUnavailable,
    NoKernelInRuns,
    Timer,
    events_in_place_of_kernels,
    stopping_rule,
)
from ..models import (
    DeviceState,
    EventOptions,
    ProfileResult,
    ResultWarning,
    StageResult,
    Timing,
)
from ..render import event as words
from .base import Mode

CLOCK_MOVED_FRACTION = 0.05  # warn when the SM clock read after the batches spreads more than this
LAUNCH_BUDGET_MS = 500.0  # the launch-inclusive CUDA-event time is the secondary figure: a shorter budget
# ... and a shorter window before it may stop converged (issue 40: its 0.5 s were a fifth of a re-profile;
# CUPTI's kernel time, the primary figure, keeps the request's window).
LAUNCH_MIN_WINDOW_MS = 200.0
ENERGY_WINDOWS = 1  # NVML energy windows per stage (0.6 s each; compare_versions keeps its own)


def quality_warnings(
    dev: DeviceState, stages: list[StageResult], plan_total: Timing | None
) -> list[ResultWarning]:
    """What limits how far event timings can be trusted: CPU or unknown device, unlocked
    clocks, noise, too few runs, durations near CUDA-event resolution; worded by
    :mod:`kprof_mcp.render.event`."""
    out: list[ResultWarning] = []

    def w(kind: str, message: str, stage: str | None = None) -> None:
        out.append(ResultWarning(kind=kind, message=message, stage=stage))

    if dev.kind == "cpu":
        w("device", words.CPU_TIMING)
    elif dev.spec_key is None:
        w("device", words.unknown_device(dev.spec_note))
    if dev.kind == "cuda" and not dev.clocks_locked:
        w("clocks", words.clocks_not_locked(dev.clocks_before, dev.clocks_after))
        compute = [s.name for s in stages if s.roofline_region == "compute"]
        if compute:
            # Measured on an H100 (docs/evidence/h100-thermal): a GEMM's free-clock times moved 8 %
            # between calls while NVML and nvidia-smi read ~1980 MHz; scaling by those readings widened
            # the spread to 13-14 %, so no such normalisation is done.
            w("clocks", words.compute_at_free_clocks(compute))
    for s in stages:
        t = s.timing
        if t.rel_iqr > 0.05:
            w("noise", words.noisy_stage(s.name, t), s.name)
        if t.runs < 10 and t.stop_reason == "budget":
            w("few_runs", words.few_runs(s.name, t.runs), s.name)
        if dev.kind == "cuda" and t.method == "cuda_events" and t.median_ns < 5_000:
            w("resolution", words.near_resolution(s.name, t.median_ns), s.name)
        mhz = t.sm_clock_mhz
        if len(mhz) >= 2 and max(mhz) > 0 and (max(mhz) - min(mhz)) / max(mhz) > CLOCK_MOVED_FRACTION:
            w("clocks", words.clock_moved(s.name, mhz), s.name)
    if plan_total is not None and plan_total.rel_iqr > 0.05:
        w("noise", words.noisy_plan(plan_total.rel_iqr))
    return out


class EventMode(Mode):
    name = "event"
    compare_role = "timing"
    summary = (
        "kernel time per stage from CUPTI (torch.profiler), L2 flushed, median/IQR, with the launch-inclusive "
        "CUDA-event time beside it; roofline estimate from the FLOP/byte model. Quick A/B."
    )
    needs = "torch (GPU or CPU)"
    options_model = EventOptions
    profilers = ("cupti",)
    samples_note = (
        " On a GPU the samples are each run's kernel time (CUPTI); the CUDA-event time around each launch "
        "(launch latency included) is the stage's `launch_timing` in result.json and the report's "
        "second table."
    )

    def cache_control(self, result: ProfileResult) -> str:
        return (
            "L2 flushed before each timed run (256 MiB buffer zeroed)"
            if result.device.kind == "cuda"
            else "none (CPU)"
        )

    def capture(self, cap) -> None:
        from ..capture import gpu_state
        from ..capture.artifacts import write_params_and_samples
        from ..tools import nvidia_smi

        torch, req = cap.torch, cap.req
        index = cap.device.index or 0
        # The SM clock after each timed batch: NVML in this process (microseconds), nvidia-smi's one
        # field without it (issue 40: an 11-field nvidia-smi query took ~0.95 s after a CUPTI session).
        sm_mhz = gpu_state.sm_clock_reader(index) if cap.use_cuda else None

        from ..tools.nvml import energy_reader

        # Clocks free (not locked by kprof): batches run throttled are set aside (see Timer).
        throttle_mhz = None
        if cap.use_cuda and not cap.device.clocks_locked:
            try:
                throttle_mhz = 0.75 * float(cap.device.clocks_before.get("clocks.max.sm"))
            except (TypeError, ValueError):
                throttle_mhz = None

        energy = energy_reader(nvidia_smi.smi_id(index)) if cap.use_cuda else None
        # The first run's outputs kept, the persisting-L2 carve-out reset; checked after the timed runs.
        guard = cap.guard()
        trace_dir = cap.work_dir / "cupti"
        stages: list[StageResult] = []
        cupti_ok = cap.use_cuda
        sessions = 0  # CUPTI profiler sessions (one per timed batch)
        for i, (stage, static) in enumerate(zip(cap.plan.stages, cap.stages)):
            cap.progress(0.25 + 0.6 * i / len(cap.plan.stages), f"timing stage {stage.name}")
            # Each stage alone, on the current stream: CUDA events are recorded on the current
            # stream, so timing a stage launched on a side stream would measure an empty interval.
            if not cap.use_cuda:
                cpu = Timer(torch, False, req)
                stages.append(StageResult(timing=cpu.time(stage.fn), **static))
                cap.phase("timing_other", cpu.spent_s)
                continue
            launch_req = (
                req.model_copy(
                    update={
                        "budget_ms": min(req.budget_ms, LAUNCH_BUDGET_MS),
                        "min_window_ms": min(req.min_window_ms, LAUNCH_MIN_WINDOW_MS),
                    }
                )
                if cupti_ok
                else req
            )
            launch = Timer(torch, True, launch_req, "events").time(stage.fn)
            cap.phase("launch_timing")  # the CUDA-event timer: its warm-up and window
            # stand_in: no kernel time, CUDA events in its place (Timing.kernel_recorded False).
            timing, kernels, stand_in = launch, [], not cupti_ok
            if cupti_ok:
                # Right after the CUDA-event timer on the same stage: warm already (3 runs suffice).
                t = Timer(
                    torch, True, req.model_copy(update={"warmup_ms": 0.0}), "cupti", clock_reader=sm_mhz
                )
                t.throttle_below_mhz = throttle_mhz
                trace_dir.mkdir(exist_ok=True)
                t.trace_path = trace_dir / f"{stage.name}.last_batch.trace.json"
                try:
                    timing, kernels = t.time(stage.fn), t.kernel_times()
                    sessions += len(t.kernels)
                    cap.phase("timing_other", t.spent_s)
                    if t.dropped_runs:
                        cap.warn(
                            "clocks",
                            f"stage {stage.name}: {t.dropped_runs} runs in {t.dropped_batches} batch(es) "
                            f"timed while the SM clock read below {throttle_mhz:.0f} MHz (75 % of its maximum: "
                            "throttled) were left out; the clocks were not locked for this run",
                        )
                    if t.foreign:
                        rows = sorted(t.foreign.values(), key=lambda d: -d["overlap_ns"])[:3]
                        cap.warn(
                            "concurrency",
                            f"stage {stage.name}: kernels not launched by its timed runs ran "
                            "during them (another stream or thread, or work a run left running): "
                            + "; ".join(
                                f"{r['name'][:60]} on stream {r['stream']} x{r['kernels']}" for r in rows
                            )
                            + ". They share the GPU with the stage and may slow it, or be work the runs did "
                            "not wait for.",
                        )
                except NoKernelInRuns as e:  # this stage's runs: CUPTI works, later stages keep it
                    stand_in = True
                    cap.warn(
                        "timing",
                        f"kernel time not measured for stage {stage.name} ({e}); its time is CUDA events "
                        "around each launch, which include launch latency (a few µs)",
                        stage.name,
                    )
                except CuptiUnavailable as e:
                    cupti_ok, stand_in = False, True
                    cap.warn(
                        "timing",
                        f"kernel time not measured ({e}); stage times are CUDA events around each "
                        "launch, which include launch latency (a few µs)",
                    )
            if stand_in:
                timing = events_in_place_of_kernels(launch)
            cap.phase("timing_other")
            # One 0.6 s window (issue 40: two cost 1.2 s of a 6.6 s re-profile; on an H100 they agreed
            # within 0.3 %, docs/evidence/h100-clocks).
            timing = timing.model_copy(
                update=Timer(torch, True, req).energy(stage.fn, energy, windows=ENERGY_WINDOWS)
            )
            cap.phase("energy_nvml")
            stages.append(
                StageResult(
                    timing=timing,
                    launch_timing=None if stand_in else launch,
                    kernel_times=kernels,
                    **static,
                )
            )
        plan_total = None
        if len(cap.plan.stages) > 1:
            cap.progress(0.88, "timing the whole plan")
            whole = lambda: cap.run_plan(sync=False)  # noqa: E731
            if cupti_ok:
                t = Timer(torch, True, req, "cupti", clock_reader=sm_mhz)
                try:
                    plan_total = t.time(whole)
                    if cap.plan.kind == "concurrent":  # overlapping kernels: the span, not the sum
                        plan_total = plan_total.model_copy(
                            update={"samples_ns": t.spans, "method": "cupti_span"}
                        )
                except CuptiUnavailable as e:
                    cap.warn("timing", f"whole-plan kernel time not measured ({e}); CUDA events instead")
            if plan_total is None:
                plan_total = Timer(torch, cap.use_cuda, req).time(whole)
                if cap.use_cuda:
                    plan_total = events_in_place_of_kernels(plan_total)
            if cap.plan.kind == "concurrent":
                cap.warn(
                    "concurrency",
                    "concurrent plan: per-stage times are each stage run alone on one "
                    "stream, so they say nothing about the overlap; only the whole-plan time "
                    "reflects it (use mode 'nsys' for the timeline)",
                )
            cap.phase("whole_plan_timing")
        cap.progress(0.9, "integrity checks: the last run against the first, one run on fresh inputs")
        cap.integrity_after_timing(guard)
        cap.phase("integrity_checks")
        if cap.use_cuda:
            cap.device.clocks_after = gpu_state.state(index)  # NVML, nvidia-smi without it
            cap.phase("sm_clock_reads")
        cap.warnings += quality_warnings(cap.device, stages, plan_total)
        cap.phase("timing_other")
        result = cap.result(stages, plan_total=plan_total)
        result.timings = {"stopping": stopping_rule(req, cap.use_cuda)}
        if cap.use_cuda:  # what the CUPTI and clock-read phases depended on (issue 40)
            import os

            result.timings["profiling_process"] = {
                "cupti_sessions": sessions,
                "TEARDOWN_CUPTI": os.environ.get("TEARDOWN_CUPTI"),
                "sm_clock_source": getattr(sm_mhz, "source", None),
                "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            }
        cap.progress(0.95, "writing artifacts")
        write_params_and_samples(cap.work_dir, result, self.cache_control(result))

    # ------------------------------------------------------------------ a user's command
    def capture_command(self, cc) -> None:
        """The command once under torch.profiler: each stage's samples are its range occurrences'
        kernel times from CUPTI (or, with no range, each launch of a kernel), as the application
        ran them: no L2 flush between them, no repeat runs. On the CPU: each range's wall time."""
        from ..capture import ranks
        from ..capture.artifacts import write_params_and_samples
        from ..capture.recording import record_kineto, stage_results
        from ..tools import nvidia_smi

        index = cc.device.index or 0
        if cc.use_cuda:
            cc.device.clocks_before = nvidia_smi.clocks(index)
        with ranks.follow(cc.work_dir, cc.use_cuda) as ranks_dir:  # every rank the command starts
            tr = record_kineto(cc)
        found, by, notes, table, comm = ranks.stages_with_ranks(cc, tr, ranks_dir)
        engine = "CUPTI via torch.profiler" if cc.use_cuda else "torch.profiler, CPU only"
        stages = stage_results(cc.static, found, engine)
        for n in notes:
            cc.warn("matching", n)
        cc.warn(
            "timeline",
            "a command's stages are timed as the application ran them: no L2 flush, no clock "
            "locking, one sample per range occurrence (or kernel launch); profile a kernel package "
            "for controlled repeat timing",
        )
        if cc.use_cuda:
            from ..capture import gpu_state

            cc.device.clocks_after = gpu_state.state(index)  # NVML, nvidia-smi without it
        cc.warnings += quality_warnings(cc.device, stages, None)
        result = cc.result(stages)
        result.command["stages_from"] = by
        if table:
            result.command["ranks"] = table
        if comm:  # the ranks' communication, skew and straggler (analysis.comm), and ranks.png
            from .timeline_assemble import write_rank_picture

            result.command["communication"] = comm
            write_rank_picture(cc.work_dir, result)
        write_params_and_samples(cc.work_dir, result, "none: the command's own runs, caches as it left them")
