"""``nsys``: the timeline of several back-to-back iterations of the whole plan, each iteration
inside a ``kprof_iteration`` range and each stage inside a ``kprof_<stage>`` range.

Two recorders feed the one trace model (:class:`kprof_mcp.parsers.kineto.Trace`), so every
timeline question is answered by :mod:`kprof_mcp.analysis.timeline` whichever recorded it:

* **Nsight Systems** (on a GPU, when a working ``nsys`` is found — see
  :func:`kprof_mcp.tools.nsys.check_nsys`): the capture child runs under ``nsys profile -t
  cuda,nvtx --cuda-graph-trace=node`` with NVTX ranges; afterwards the parent exports the
  ``.nsys-rep`` to SQLite and a reading child (:meth:`TimelineMode.read_output`) parses it
  (:mod:`kprof_mcp.parsers.nsys`). Both files are kept: a person opens ``timeline.nsys-rep`` in
  the Nsight Systems GUI. With ``python_backtrace`` each CUDA call's Python stack is recorded too
  (:data:`kprof_mcp.tools.nsys.BACKTRACE_FLAGS`, exported with ``--include-json``), and each idle
  cause names its line (:mod:`kprof_mcp.analysis.idle_sources`).
* **CUPTI via torch.profiler** (Kineto): when no usable Nsight Systems is found (the report says
  why: typically its importer missing ``libpfm4``/``libdw1``/``libelf1`` in a container), when
  ``timeline_engine='kineto'`` is asked for, and on the CPU (CPU activity only).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from .. import safefs
from ..analysis import timeline as tl_lib
from ..models import NsysOptions, ProfileResult, ResultWarning
from ..parsers import kineto
from ..render.timeline import timeline_sections
from ..tools import nsys as nsys_tool
from .base import Launch, Mode, ModeError, PreflightEnv
from .timeline_assemble import _command_timeline, _fallback_note, assemble, write_timeline

PROFILER_WARMUP = 3  # plan iterations run before the recorded ones (both engines)
REPORT_FILE = "timeline.nsys-rep"
SQLITE_FILE = "timeline.sqlite"
__all__ = [
    "PROFILER_WARMUP",
    "REPORT_FILE",
    "SQLITE_FILE",
    "TimelineMode",
    "_command_timeline",
    "assemble",
    "write_timeline",
]


class TimelineMode(Mode):
    name = "nsys"
    options_model = NsysOptions
    profilers = ("nsys", "cupti")
    plain_pass = True  # a command's step timed without a profiler too (engine/plain.py)
    summary = (
        "timeline: kernel and CUDA API summaries, memory operations, ranges per stage, stream overlap, launch "
        "order, GPU idle gaps, launch overhead, waves; recorded by Nsight Systems (.nsys-rep + SQLite kept) "
        "or CUPTI via torch.profiler; CSV tables and a PNG"
    )
    needs = "Nsight Systems, or torch.profiler (CUPTI via Kineto); CPU activity only without a GPU"

    def cache_control(self, result: ProfileResult) -> str:
        return (
            "none: iterations run back to back with warm caches"
            if result.device.kind == "cuda"
            else "none (CPU)"
        )

    # ------------------------------------------------------------------ parent
    def preflight(self, env: PreflightEnv) -> dict[str, Any]:
        """Choose the recorder: Nsight Systems when asked for or found working, else Kineto with
        the reason recorded (``timeline_fallback``) so the report can say it."""
        engine = env.timeline_engine
        if env.cpu:
            if engine == "nsys":
                why = "KPROF_FORCE_CPU=1 is set" if env.force_cpu else "no NVIDIA GPU is visible (nvidia-smi)"
                raise ModeError(
                    f"timeline_engine='nsys' records CUDA activity with Nsight Systems, but {why}. "
                    "Leave timeline_engine='auto' for a CPU-only torch.profiler timeline."
                )
            return {}
        if engine == "kineto":
            return {"timeline_fallback": "not used: timeline_engine='kineto' was asked for"}
        check = nsys_tool.check_nsys()
        if check.usable and check.path is not None:
            return {"nsys_path": str(check.path)}
        if engine == "nsys":
            raise ModeError(
                f"{(check.problem or 'Nsight Systems is not usable here').rstrip('.')}. Or pass "
                "timeline_engine='kineto' (CUPTI via torch.profiler)."
            )
        return {"timeline_fallback": check.problem}

    def launch(self, req, stages: list[str], scratch: Path) -> Launch:
        if not req.options.nsys_path:
            return Launch()
        nsys = Path(req.options.nsys_path)
        base = scratch / "timeline"
        cmd = nsys_tool.profile_prefix(nsys, base, req.options.python_backtrace)
        profiler = {
            "engine": "Nsight Systems",
            "nsys_version": nsys_tool.version(nsys),
            "nsys_path": str(nsys),
            "command": [c if c != str(base) else "<profile_dir>/timeline" for c in cmd[1:]],
            "report_file": REPORT_FILE,
            "sqlite_file": SQLITE_FILE,
        }
        return Launch(prefix=cmd, profiler=profiler, scratch=scratch)

    def after_run(self, req, record, launch, work_dir, on_progress, control, timeout_s) -> None:
        if not req.options.nsys_path:  # recorded in the child with torch.profiler: say why not Nsight Systems
            result = ProfileResult.model_validate_json(
                safefs.read_text(work_dir, work_dir / "result.json", 64 << 20)
            )
            result.timeline["nsys"] = _fallback_note(req, result.device.kind == "cuda")
            safefs.write_atomic(work_dir, work_dir / "result.json", result.model_dump_json(indent=2))
            return
        from .. import runner

        log = record.log
        safefs.write_atomic(work_dir, work_dir / "nsys.log", log)
        rep = (launch.scratch or work_dir) / REPORT_FILE
        if not rep.is_file():
            tail = " | ".join(line.strip() for line in log.strip().splitlines()[-6:])[:800]
            metrics = (
                " If it names GPU metrics, set KPROF_NSYS_GPU_METRICS=0 (no sampling of the GPU's units) and retry."
                if any(a.startswith("--gpu-metrics-device") for a in launch.prefix or [])
                else ""
            )
            raise ModeError(
                f"Nsight Systems wrote no report ({REPORT_FILE}); its output ends: {tail or '(nothing)'}.{metrics} "
                "Pass timeline_engine='kineto' to record with torch.profiler instead "
                f"(partial artifacts kept in {work_dir})",
                "nsys_failed",
            )
        shutil.move(str(rep), work_dir / REPORT_FILE)
        if on_progress:
            on_progress(0.88, "exporting the Nsight Systems report to SQLite")
        nsys = Path(req.options.nsys_path)
        try:
            nsys_tool.export_sqlite(
                nsys,
                work_dir / REPORT_FILE,
                work_dir / SQLITE_FILE,
                timeout_s=min(600, timeout_s),
                include_json=req.options.python_backtrace or nsys_tool.samples_python(launch.prefix),
            )
        except nsys_tool.NsysError as e:
            raise ModeError(f"{e} (the report is kept in {work_dir / REPORT_FILE})", "nsys_failed") from None
        profiler = dict(
            launch.profiler,
            profiled_process_wall_s=record.wall_s,
            nsys_exit_code=record.returncode,
        )
        safefs.write_atomic(work_dir, work_dir / "profiler.json", json.dumps(profiler, indent=2, default=str))
        if on_progress:
            on_progress(0.93, "reading the Nsight Systems export")
        try:
            runner.finish(req.model_dump_json(), work_dir, log, profiler, control=control)
        except runner.WorkerError as e:
            raise ModeError(f"{e} (partial artifacts kept in {work_dir})", e.kind) from None

    def report(self, result, assessment, others):
        from ..render.report import ModeReport

        return ModeReport(sections=timeline_sections(result))

    # ------------------------------------------------------------------ child
    def capture(self, cap) -> None:
        if cap.req.options.nsys_path and cap.use_cuda:
            return self._capture_nvtx(cap)
        return self._capture_kineto(cap)

    def _capture_nvtx(self, cap) -> None:
        """Under ``nsys profile``: warm-up, then the recorded iterations inside NVTX ranges; the
        trace is read afterwards from the export (:meth:`read_output`)."""
        torch, req = cap.torch, cap.req
        nvtx = torch.cuda.nvtx
        guard = cap.guard()  # the first run's outputs kept, the persisting-L2 carve-out reset
        for _ in range(PROFILER_WARMUP):  # outside any range: not analysed
            cap.run_plan()
        cap.phase("timeline_warmup")
        cap.progress(
            0.4, f"recording {req.options.timeline_iters} iterations of the plan with Nsight Systems"
        )

        def ranged(stage, fn):
            def run():
                nvtx.range_push(tl_lib.RANGE_PREFIX + stage.name)
                try:
                    return fn()
                finally:
                    nvtx.range_pop()

            return run

        for _ in range(req.options.timeline_iters):
            nvtx.range_push(tl_lib.ITER_RANGE)
            cap.run_plan(sync=False, wrap=ranged)
            nvtx.range_pop()
        torch.cuda.synchronize()
        cap.phase("timeline_record")
        # After the last iteration range: the trace is cut to the iterations (iterations_window).
        self._integrity(cap, guard)
        capture = {
            "result": cap.fields_json(),
            "stages": json.loads(json.dumps(cap.stages, default=lambda o: o.model_dump())),
        }
        safefs.write_atomic(
            cap.work_dir, cap.work_dir / "capture.json", json.dumps(capture, indent=2, default=str)
        )

    def _capture_kineto(self, cap) -> None:
        from torch.profiler import ProfilerActivity, profile, record_function, schedule

        torch, req, use_cuda = cap.torch, cap.req, cap.use_cuda
        guard = cap.guard()  # the first run's outputs kept, the persisting-L2 carve-out reset
        for _ in range(PROFILER_WARMUP):  # warm-up outside the recording
            cap.run_plan()
        cap.phase("timeline_warmup")
        cap.progress(
            0.4, f"recording {req.options.timeline_iters} iterations of the plan with torch.profiler"
        )
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if use_cuda else [])

        def ranged(stage, fn):
            def run():
                with record_function(tl_lib.RANGE_PREFIX + stage.name):
                    if use_cuda:
                        torch.cuda.nvtx.range_push(tl_lib.RANGE_PREFIX + stage.name)
                    try:
                        return fn()
                    finally:
                        if use_cuda:
                            torch.cuda.nvtx.range_pop()

            return run

        # Kineto's own warm-up steps: the first iterations under CUPTI carry its start-up cost
        # (seen on an H100: 5.6x slower spans in the first recorded iteration), so only the
        # iterations after them are kept.
        sched = schedule(wait=0, warmup=PROFILER_WARMUP, active=req.options.timeline_iters, repeat=1)
        with profile(activities=activities, schedule=sched) as prof:
            total = PROFILER_WARMUP + req.options.timeline_iters
            for i in range(total):
                with record_function(tl_lib.ITER_RANGE):
                    cap.run_plan(sync=False, wrap=ranged)
                if use_cuda and i == total - 1:
                    torch.cuda.synchronize()  # every recorded kernel has finished before the trace is cut
                prof.step()
        trace_path = cap.work_dir / "trace.json"
        prof.export_chrome_trace(str(trace_path))
        cap.phase("timeline_record")
        self._integrity(cap, guard)  # the recording has ended: none of its launches is in the trace
        cap.progress(0.8, "analysing the timeline")
        tr = tl_lib.iterations_window(kineto.load_trace(trace_path))
        engine = (
            "CUPTI via torch.profiler (Kineto) " + torch.__version__
            if use_cuda
            else "torch.profiler, CPU activity only (no GPU)"
        )
        stages, plan_total, tl, warnings = assemble(
            tr, cap.stages, cap.device.sm_count, engine, req.options.timeline_iters, cap.plan.kind, use_cuda
        )
        cap.warnings += warnings
        result = cap.result(stages, plan_total=plan_total, timeline=tl.to_dict())
        cap.phase("timeline_analysis")
        result.phases_s = dict(cap.phases_s)
        write_timeline(cap.work_dir, tr, tl, result, self.cache_control(result))

    @staticmethod
    def _integrity(cap, guard) -> None:
        """The integrity checks after the recorded iterations (:mod:`kprof_mcp.capture.integrity`): the
        last iteration's outputs against the first run's, one run on fresh inputs, the carve-out read."""
        cap.progress(0.75, "integrity checks: the last iteration against the first run, one on fresh inputs")
        cap.integrity_after_timing(guard)
        cap.phase("integrity_checks")

    def read_output(self, req, work_dir: Path, log: str, profiler: dict[str, Any]) -> ProfileResult:
        """The Nsight Systems recording (SQLite export) → the same result the Kineto path builds."""
        from ..parsers import nsys as nsys_parser
        from ..protocol import ExpectedError

        if req.command:
            return self._read_command(req, work_dir, profiler)
        capture = json.loads(safefs.read_text(work_dir, work_dir / "capture.json", 64 << 20))
        try:
            # Nsight Systems recorded the whole process: JIT, correctness run, inputs, warm-up.
            tr = tl_lib.iterations_window(nsys_parser.load_sqlite(work_dir / SQLITE_FILE))
        except (ValueError, OSError) as e:
            raise ModeError(f"reading the Nsight Systems export failed: {e}", "nsys_failed") from None
        fields = capture["result"]
        engine = f"Nsight Systems {profiler.get('nsys_version') or ''}".strip()
        try:
            stages, plan_total, tl, warnings = assemble(
                tr,
                capture["stages"],
                fields["device"].get("sm_count"),
                engine,
                req.options.timeline_iters,
                fields["plan_kind"],
                True,
            )
        except ExpectedError as e:
            raise ModeError(str(e)) from None
        tl_dict = tl.to_dict()
        tl_dict["nsys"] = (
            f"{profiler.get('nsys_path')} recorded this timeline ({REPORT_FILE}: open it in the Nsight "
            f"Systems GUI; {SQLITE_FILE}: its SQLite export, which this report reads)"
        )
        result = ProfileResult(
            **{
                **fields,
                "stages": stages,
                "plan_total": plan_total,
                "timeline": tl_dict,
                "profiler": profiler,
                "warnings": [ResultWarning(**w) for w in fields.get("warnings", [])] + warnings,
            }
        )
        write_timeline(work_dir, tr, tl, result, self.cache_control(result))
        return result

    # ------------------------------------------------------------------ a user's command
    def command_launch(self, req, scratch: Path) -> Launch:
        return self.launch(req, [], scratch)

    def capture_command(self, cc) -> None:
        """Under Nsight Systems: run the command, the trace is read afterwards. Otherwise the
        command under torch.profiler, analysed here."""
        if cc.req.options.nsys_path and cc.use_cuda:
            from ..capture.op_floor import record_op_floor

            cc.run()
            record_op_floor(cc.torch)  # a lean eager op's host cost in this process's trace (replay.floors)
            cc.capture_json()
            return
        from ..capture.recording import record_kineto

        # the timeline cuts the floor off before finding stages; python_backtrace: each CUDA call's user function
        tr = record_kineto(cc, op_floor=True, with_stack=bool(cc.req.options.python_backtrace))
        engine = (
            "CUPTI via torch.profiler (Kineto) " + cc.torch.__version__
            if cc.use_cuda
            else "torch.profiler, CPU activity only (no GPU)"
        )
        stages, tl, warnings, by, tr = _command_timeline(
            cc.req,
            cc.static,
            tr,
            engine,
            cc.use_cuda,
            cc.device.sm_count,
            cc.output_tail,
            cc.work_dir,
            tests=cc.tests,
        )
        result = cc.result(stages, timeline=tl.to_dict())
        result.warnings += warnings
        result.command["stages_from"] = by
        write_timeline(cc.work_dir, tr, tl, result, self.cache_control(result))

    def _read_command(self, req, work_dir: Path, profiler: dict[str, Any]) -> ProfileResult:
        from ..analysis.command import stage_static
        from ..parsers import nsys as nsys_parser
        from ..protocol import ExpectedError

        capture = json.loads(safefs.read_text(work_dir, work_dir / "capture.json", 64 << 20))
        try:
            tr = nsys_parser.load_sqlite(work_dir / SQLITE_FILE)
        except (ValueError, OSError) as e:
            raise ModeError(f"reading the Nsight Systems export failed: {e}", "nsys_failed") from None
        fields = capture["result"]

        def static(name: str) -> dict[str, Any]:
            return stage_static(
                name, req.stage_models.get(name), fields["device"], capture.get("peaks") or {}
            )

        engine = f"Nsight Systems {profiler.get('nsys_version') or ''}".strip()
        ranked = _ranks(req, work_dir / SQLITE_FILE)  # a multi-process job's ranks (issue 39), or None
        try:
            stages, tl, warnings, by, tr = _command_timeline(
                req,
                static,
                tr,
                engine,
                True,
                fields["device"].get("sm_count"),
                tests=capture.get("tests"),
                split=ranked[:3] if ranked else None,
            )
        except ExpectedError as e:
            raise ModeError(str(e), e.kind) from None
        result = ProfileResult(
            **{
                **fields,
                "profiler": profiler,
                "stages": stages,
                "timeline": tl.to_dict(),
                "warnings": [ResultWarning(**w) for w in fields.get("warnings", [])] + warnings,
            }
        )
        result.command["stages_from"] = by
        if ranked:  # the per-rank table and the ranks' communication, skew and straggler (analysis.comm)
            result.command["ranks"] = ranked[3]
            if ranked[4]:
                result.command["communication"] = ranked[4]
        result.timeline["nsys"] = (
            f"{profiler.get('nsys_path')} recorded this timeline ({REPORT_FILE}: open it in "
            f"the Nsight Systems GUI; {SQLITE_FILE}: its SQLite export, which this report reads)"
        )
        write_timeline(work_dir, tr, tl, result, self.cache_control(result))
        return result


def _ranks(req, sqlite: Path):
    """A report of several kernel-launching processes split by rank (:mod:`kprof_mcp.analysis.nsys_ranks`):
    (stages, "range" | "kernel", notes, the per-rank table, the communication summary); None for one
    process (read as before) or a split that found no stage (the merged report's stages then)."""
    from ..analysis.nsys_ranks import split_stages
    from ..parsers.nsys_processes import load_processes

    try:
        procs = load_processes(sqlite)
    except (ValueError, OSError):
        return None
    if procs is None:
        return None
    found, by, notes, table, comm = split_stages(procs, list(req.include), req.warmup_occurrences)
    return (found, by, notes, table, comm) if found else None
