"""The Nsight Compute modes: ``annotation`` (the default first pass: a small metric set and
the cheap rule sections per stage) and ``ncu`` (``--set full``: every section, the source view).

Parent: preflight (GPU, ncu, MIG + clock lock), the ``ncu`` command that wraps the child
(only launches inside each stage's NVTX range are profiled), and after the run
``profiler.json`` plus the report read in a separate child. Child: :meth:`NsightMode.capture`
launches each stage inside its range; :func:`read_output` (:mod:`.nsight_read`) turns ``profile.ncu-rep`` into stage
results, rule lists, section dumps and the source view.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from .. import safefs
from ..models import NsightOptions, ProfileRequest, ProfileResult
from ..parsers import ncu as ncu_parser
from ..parsers.ncu import NcuError
from ..render.nsight import nsight_sections
from ..tools import ncu as ncu_tool
from ..tools import nvidia_smi
from .base import Launch, Mode, ModeError, PreflightEnv
from .nsight_artifacts import REPORT_FILE, cache_control
from .nsight_read import quality_warnings, read_command_output, read_output
from .nsight_stages import SHOWN, _occurrences, match_stages, stage_result

__all__ = [
    "REPORT_FILE",
    "SHOWN",
    "NsightMode",
    "_occurrences",
    "cache_control",
    "match_stages",
    "quality_warnings",
    "read_command_output",
    "read_output",
    "stage_result",
]


LAUNCH_RUNS = 5  # CUDA-event runs per stage outside the profiled ranges (after one warm-up)


def unprofiled_launch_times(cap, runs: int = LAUNCH_RUNS) -> dict[str, dict[str, Any]]:
    """Each stage launched ``runs`` times outside every NVTX range (Nsight Compute profiles none of
    them), each run timed with CUDA events on the current stream (the wall clock on the CPU): the
    figure :func:`.nsight_stages.unprofiled_stage` gives a stage of which ncu profiled no kernel,
    marked as such. Timing fields for ``capture.json``, by stage."""
    import time

    from ..capture.streams import current_stream_id

    torch, out = cap.torch, {}
    for stage in cap.plan.stages:
        stage.fn()  # warm, and on the current stream as event mode times it
        samples, left = [], []
        for _ in range(runs):
            if cap.use_cuda:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                stage.fn()
                end.record()
                end.synchronize()
                # Work the timed stream did not wait for (a kernel on a private stream): the device is
                # still busy after the timed stream's last event.
                t0 = time.perf_counter_ns()
                torch.cuda.synchronize()
                t1 = time.perf_counter_ns()
                torch.cuda.synchronize()  # the same call on an idle device: its own cost
                left.append(float(t1 - t0) - float(time.perf_counter_ns() - t1))
                samples.append(float(start.elapsed_time(end)) * 1e6)
            else:
                t0 = time.perf_counter_ns()
                stage.fn()
                samples.append(float(time.perf_counter_ns() - t0))
        out[stage.name] = {
            "samples_ns": samples,
            "method": "cuda_events" if cap.use_cuda else "cpu_wall_clock",
            "l2_flushed": False,
            "stop_reason": f"{runs} launches outside the profiled ranges, after the integrity checks",
            "left_running_ns": sorted(left)[len(left) // 2] if left else None,
            "stream_id": current_stream_id(torch) if cap.use_cuda else None,
        }
    if cap.use_cuda:
        torch.cuda.synchronize()
    return out


class NsightMode(Mode):
    needs = "Nsight Compute (ncu) and an NVIDIA GPU"
    options_model = NsightOptions
    profilers = ("ncu",)
    needs_gpu = True
    # Under instrumentation the autotuner's timings are distorted and Triton would cache the
    # config it picked there: compile and autotune in a plain child first.
    prepare_first = True
    compare_role = "counters"
    query_smi_in_child = False  # every process the child starts is one more for ncu to attach to
    timing_note = (
        "Duration is Nsight Compute's gpu__time_duration of each profiled launch (kernel time only, "
        "no launch overhead), under the clock and cache control stated below; it is not comparable "
        "with event-mode times at boost clocks."
    )

    def __init__(self, name: str, summary: str, full_set: bool):
        self.name, self.summary, self.full_set = name, summary, full_set
        # annotation (the default) falls back to event mode's CUPTI timing where counters are
        # denied; ncu mode's whole point is counters, so its error stands.
        self.counters_fallback = None if full_set else "event"

    # ------------------------------------------------------------------ parent
    def preflight(self, env: PreflightEnv) -> dict[str, Any]:
        """Fail before any process starts, saying how to fix it: no GPU, no ncu, MIG + clock lock."""
        if env.cpu:
            why = "KPROF_FORCE_CPU=1 is set" if env.force_cpu else "no NVIDIA GPU is visible (nvidia-smi)"
            raise ModeError(
                f"mode {self.name!r} reads GPU performance counters with Nsight Compute, but {why}. "
                "mode='event' works without a GPU (CPU timing through the Triton interpreter)."
            )
        path = ncu_tool.find_ncu()
        if path is None:
            raise ModeError(ncu_tool.not_found_message())
        if (
            env.clock_control == "base"
            and env.gpus
            and env.gpus[0].get("mig.mode.current", "").lower() == "enabled"
        ):
            raise ModeError(
                "this GPU is in MIG mode, where Nsight Compute cannot lock clocks "
                "(--clock-control base): pass clock_control='none' (results then depend on boost "
                "and thermals; the report says so), or profile on a GPU without MIG."
            )
        return {"ncu_path": str(path)}

    def launch(self, req: ProfileRequest, stages: list[str], scratch: Path) -> Launch:
        return self._launch(req, stages, scratch, None)

    def command_launch(self, req: ProfileRequest, scratch: Path) -> Launch:
        """The command's launches inside the include patterns' NVTX ranges (ncu filters them:
        :func:`kprof_mcp.tools.ncu.nvtx_filters`), or every launch without patterns, up to
        ``req.options.max_kernels``, each with its NVTX ranges recorded (``--nvtx``); stages are formed
        from those ranges when the report is read."""
        return self._launch(
            req, [], scratch, req.options.max_kernels, ncu_tool.nvtx_filters(list(req.include))
        )

    def _launch(
        self,
        req: ProfileRequest,
        stages: list[str],
        scratch: Path,
        launch_count: int | None,
        nvtx_includes: list[str] | None = None,
    ) -> Launch:
        assert req.options.ncu_path
        path = Path(req.options.ncu_path)
        try:
            setup = ncu_tool.setup(path)
        except NcuError as e:
            raise ModeError(str(e), e.kind) from None
        base = scratch / "profile"
        try:
            cmd = ncu_tool.build_command(
                path,
                stages,
                base,
                list(setup.chosen.values()),
                req.clock_control,
                "all",
                full_set=self.full_set,
                launch_count=launch_count,
                nvtx_includes=nvtx_includes,
            )
        except ValueError as e:
            raise ModeError(str(e)) from None
        profiler = {
            "engine": "Nsight Compute",
            "ncu_version": setup.version,
            "ncu_path": str(path),
            "command": [c if c != str(base) else "<profile_dir>/profile" for c in cmd[1:]],
            "clock_control": req.clock_control,
            "cache_control": "all",
            "replay_mode": "kernel",
            "nvtx_ranges": [ncu_parser.range_name(s) for s in stages] or nvtx_includes or [],
            "launches_per_stage": req.options.ncu_launches,
            "metrics_chosen": setup.chosen,
            "metrics_unknown": {k: list(v) for k, v in setup.unknown.items()},
            "metric_catalog": setup.catalog,
        }
        return Launch(
            prefix=cmd, locks_clocks=req.clock_control == "base", profiler=profiler, scratch=scratch
        )

    def counters_denied(self, log: str) -> bool:
        failure = ncu_parser.log_failure(ncu_parser.parse_log(log), log, report_exists=False)
        return failure is not None and failure.kind == "counters_not_permitted"

    def explain_failure(self, message: str, log: str) -> str:
        """A failed run of the child under ncu: ncu's own reason first when its log has one."""
        failure = ncu_parser.log_failure(ncu_parser.parse_log(log), log, report_exists=False)
        if failure is not None and failure.kind in ("counters_not_permitted", "clock_control"):
            return f"{failure} (the kernel run itself said: {message[:300]})"
        return message

    def after_run(self, req, record, launch, work_dir, on_progress, control, timeout_s) -> None:
        from .. import runner

        report = (launch.scratch or work_dir) / "profile.ncu-rep"
        if report.is_file():
            shutil.move(str(report), work_dir / REPORT_FILE)
        safefs.write_atomic(work_dir, work_dir / "ncu.log", record.log)
        profiler = dict(
            launch.profiler,
            profiled_process_wall_s=record.wall_s,
            ncu_exit_code=record.returncode,
            nvidia_smi_before=(nvidia_smi.gpus() or [{}])[0],
        )
        safefs.write_atomic(work_dir, work_dir / "profiler.json", json.dumps(profiler, indent=2, default=str))
        if on_progress:
            on_progress(0.93, "reading the Nsight Compute report")
        try:
            runner.finish(req.model_dump_json(), work_dir, record.log, profiler, control=control)
        except runner.WorkerError as e:
            raise ModeError(f"{e} (partial artifacts kept in {work_dir})", e.kind) from None

    def report(self, result, assessment, others):
        from ..render.report import ModeReport

        return ModeReport(sections=nsight_sections(result, others), timing_note=self.timing_note)

    # ------------------------------------------------------------------ child
    def cache_control(self, result: ProfileResult) -> str:
        return cache_control(result)

    def capture(self, cap) -> None:
        """Launch each stage ``req.options.ncu_launches`` times inside its NVTX range, the only launches
        Nsight Compute profiles (``--nvtx-include kprof_<stage>/``); everything before (JIT,
        autotuning, the correctness run) ran outside any range and is not profiled. ncu replays
        each profiled launch once per counter pass, restoring memory in between, so the memory a
        launch leaves is that of one run.

        Around the profiled launches, outside every range (so never profiled), the integrity checks
        event mode makes (:mod:`kprof_mcp.capture.integrity`): before, the first run's outputs kept and
        the persisting-L2 carve-out reset; after, the last profiled launch's outputs against the first
        run's, one run on fresh inputs with the outputs poisoned, the carve-out read. Then each stage
        timed with CUDA events (:func:`unprofiled_launch_times`): the figure of a stage whose launches
        in its range launched nothing (a cached result), which the report then marks suspect."""
        torch, req = cap.torch, cap.req
        if cap.autotuned_here:
            cap.warn(
                "autotune",
                f"stage(s) {cap.autotuned_here}: Triton's autotuner benchmarked its configs inside "
                "the Nsight Compute process (cold autotune cache), where instrumentation distorts the "
                "timings it ranks by; the chosen config is cached and reused. Clear Triton's cache "
                "and profile in mode 'event' first (kprof does this itself for a new source/params) "
                "if the tiling looks off.",
            )
        dev = cap.device
        dev.clocks_locked = req.clock_control == "base"
        dev.clock_control = (
            "ncu --clock-control base: Nsight Compute locks the SM clock to base during each "
            "profiled launch and restores it after"
            if req.clock_control == "base"
            else "ncu --clock-control none: clocks free (boost and thermals move results)"
        )
        guard = cap.guard()  # outside the ranges: its copies are not profiled
        torch.cuda.synchronize()
        for i, stage in enumerate(cap.plan.stages):
            cap.progress(0.3 + 0.6 * i / len(cap.plan.stages), f"Nsight Compute profiling stage {stage.name}")
            fn = cap.stage_callable(stage)
            for _ in range(req.options.ncu_launches):
                torch.cuda.nvtx.range_push(ncu_parser.range_name(stage.name))
                fn()
                torch.cuda.nvtx.range_pop()
                torch.cuda.synchronize()
        cap.phase("ncu_profiled_launches")
        cap.progress(
            0.9, "integrity checks outside the profiled ranges: the last launch against the first run"
        )
        cap.integrity_after_timing(guard)
        launch_timing = unprofiled_launch_times(cap)
        cap.phase("integrity_checks")
        capture = {
            "result": cap.fields_json(),
            "stages": json.loads(json.dumps(cap.stages, default=lambda o: o.model_dump())),
            "launch_timing": launch_timing,
        }
        safefs.write_atomic(
            cap.work_dir, cap.work_dir / "capture.json", json.dumps(capture, indent=2, default=str)
        )

    def read_output(
        self, req: ProfileRequest, work_dir: Path, log: str, profiler: dict[str, Any]
    ) -> ProfileResult:
        if req.command:
            return read_command_output(req, work_dir, log, profiler, self.full_set)
        return read_output(req, work_dir, log, profiler, self.full_set)

    # ------------------------------------------------------------------ a user's command
    def capture_command(self, cc) -> None:
        """Run the command under ncu (it wraps this process); the report is read afterwards."""
        dev = cc.device
        dev.clocks_locked = cc.req.clock_control == "base"
        dev.clock_control = (
            "ncu --clock-control base: Nsight Compute locks the SM clock to base during each "
            "profiled launch and restores it after"
            if dev.clocks_locked
            else "ncu --clock-control none: clocks free (boost and thermals move results)"
        )
        import kprof

        kprof.CROSS_THREAD = True  # ranges seen by every thread's launches (autograd's backward too)
        cc.run()
        cc.capture_json()
