"""``nsys``: the timeline of several back-to-back iterations of the whole plan, recorded with
torch.profiler (CUPTI via Kineto on a GPU; CPU activity only without one), each stage inside
a ``kprof_<stage>`` range (record_function and NVTX). The trace is read into the one trace
model (:mod:`kprof_mcp.parsers.kineto`) and every timeline question is answered by
:mod:`kprof_mcp.analysis.timeline`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..analysis import timeline as tl_lib
from ..models import ProfileResult, StageResult, Timing
from ..parsers import kineto
from ..render.timeline import timeline_sections
from ..tools.nsys import find_nsys
from .base import Mode

PROFILER_WARMUP = 3


def nsys_note() -> str:
    """Which timeline engine ran, and why not Nsight Systems."""
    nsys = find_nsys()
    if not nsys:
        return "not installed; the timeline comes from CUPTI via torch.profiler"
    return (f"found at {nsys}, but kprof does not drive it yet (on the lent H100 its importer cannot turn a "
            ".qdstrm into a report); the timeline comes from CUPTI via torch.profiler")


class TimelineMode(Mode):
    name = "nsys"
    summary = ("timeline: kernel and CUDA API summaries, memory operations, ranges per stage, stream overlap, launch "
               "order, GPU idle gaps, launch overhead, waves; trace JSON, CSV tables and a PNG")
    needs = "torch.profiler (CUPTI via Kineto); CPU activity only without a GPU"

    def cache_control(self, result: ProfileResult) -> str:
        return "none: iterations run back to back with warm caches" if result.device.kind == "cuda" else "none (CPU)"

    def after_run(self, req, record, launch, work_dir, on_progress, control, timeout_s) -> None:
        result = ProfileResult.model_validate_json((work_dir / "result.json").read_text())
        result.timeline["nsys"] = nsys_note()
        (work_dir / "result.json").write_text(result.model_dump_json(indent=2))

    def report(self, result, assessment, others):
        from ..render.report import ModeReport

        return ModeReport(sections=timeline_sections(result))

    def capture(self, cap) -> dict[str, Any]:
        from torch.profiler import ProfilerActivity, profile, record_function, schedule

        from ..child.artifacts import write_params_and_samples

        torch, req, use_cuda = cap.torch, cap.req, cap.use_cuda
        for _ in range(3):  # warm-up outside the recording
            cap.run_plan()
        cap.phase("timeline_warmup")
        cap.progress(0.4, f"recording {req.timeline_iters} iterations of the plan with torch.profiler")
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
        sched = schedule(wait=0, warmup=PROFILER_WARMUP, active=req.timeline_iters, repeat=1)
        with profile(activities=activities, schedule=sched) as prof:
            total = PROFILER_WARMUP + req.timeline_iters
            for i in range(total):
                with record_function(tl_lib.ITER_RANGE):
                    cap.run_plan(sync=False, wrap=ranged)
                if use_cuda and i == total - 1:
                    torch.cuda.synchronize()  # every recorded kernel has finished before the trace is cut
                prof.step()
        trace_path = cap.work_dir / "trace.json"
        prof.export_chrome_trace(str(trace_path))
        cap.phase("timeline_record")
        cap.progress(0.8, "analysing the timeline")
        tr = kineto.load_trace(trace_path)
        names = [s["name"] for s in cap.stages]
        tl = tl_lib.analyze(tr, names, cap.device.sm_count)
        tl.engine = ("CUPTI via torch.profiler (Kineto) " + torch.__version__ if use_cuda else
                     "torch.profiler, CPU activity only (no GPU)")
        stage_results = []
        for static, row in zip(cap.stages, tl.stages):
            # The stage's GPU span per iteration (first kernel start to last kernel end): for a
            # launch-bound stage that is what it costs, not the sum of its tiny kernels.
            samples = row["gpu_span_ns_samples"]
            method = "cupti gpu span per iteration"
            if not samples:  # CPU: the range's wall time per iteration
                samples = [float(v) for v in tr.ranges[tr.ranges["name"] == tl_lib.RANGE_PREFIX + static["name"]]["dur"]]
                method = "cpu range wall time per iteration"
            if not samples:
                from ..protocol import ExpectedError

                raise ExpectedError("mode", f"stage {static['name']!r}: nothing recorded in its range")
            stage_results.append(StageResult(timing=Timing(samples_ns=samples, method=method, l2_flushed=False,
                                                           stop_reason=f"{req.timeline_iters} recorded iterations"),
                                             **static))
        plan_total = None
        if tl.iteration_span_ns:
            plan_total = Timing(samples_ns=tl.iteration_span_ns, method="gpu span per iteration (first kernel start "
                                "to last kernel end)", l2_flushed=False, stop_reason=f"{req.timeline_iters} iterations")
        if use_cuda:
            cap.warn("timeline", "timeline mode: no L2 flush and no clock locking; iterations run back to back as in "
                                 "an application, so times include warm caches and launch overhead")
        if cap.plan.kind == "concurrent":
            cap.warn("concurrency", "concurrent plan: per-stage durations are each stage's kernel time inside the "
                                    "overlapped run; the whole-plan span and the stream overlap table are what "
                                    "measure concurrency")
        for note in tl.notes:
            cap.warn("timeline", note)
        result = cap.result(stage_results, plan_total=plan_total, timeline=tl.to_dict())
        self._write_artifacts(cap.work_dir, tr, tl, result)
        cap.phase("timeline_analysis")
        result.phases_s = dict(cap.phases_s)
        write_params_and_samples(cap.work_dir, result, self.cache_control(result))
        return {}

    @staticmethod
    def _write_artifacts(work_dir: Path, tr, tl, result: ProfileResult) -> None:
        import pandas as pd

        from ..models import ResultWarning
        from ..render.plots import plot_timeline

        d = work_dir / "timeline"
        d.mkdir(exist_ok=True)
        tr.kernels.to_csv(d / "kernels.csv", index=False)
        tr.api.to_csv(d / "cuda_api.csv", index=False)
        tr.memops.to_csv(d / "memops.csv", index=False)
        for name in ("kernel_summary", "api_summary", "memop_summary", "streams", "gaps", "launch_order", "waves"):
            pd.DataFrame(getattr(tl, name)).to_csv(d / f"{name}.csv", index=False)
        pd.DataFrame([{k: v for k, v in s.items() if not k.endswith("_samples")} for s in tl.stages]).to_csv(
            d / "stages.csv", index=False)
        try:
            plot_timeline(tr, tl, work_dir / "timeline.png", f"{result.kernel} {result.version}")
        except Exception as e:  # noqa: BLE001 — a plotting failure must not lose the measurements
            result.warnings.append(ResultWarning(kind="artifact",
                                                 message=f"timeline.png not written: {type(e).__name__}: {e}"))
