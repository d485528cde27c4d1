"""The timeline mode's answers from one recorded trace, whichever recorder made it: a package's
stage results, whole-plan time and timeline (:func:`assemble`), a command's stages and the
timeline over their span (:func:`_command_timeline`, with where its wall time went), and the
``timeline/`` artifacts (:func:`write_timeline`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import safefs
from ..analysis import timeline as tl_lib
from ..models import ProfileResult, ResultWarning, StageResult, Timing


def _command_timeline(
    req,
    static,
    tr,
    engine: str,
    use_cuda: bool,
    sm_count: int | None,
    output_tail: str = "",
    work_dir=None,
    tests: list[str] | None = None,
    split=None,
):
    """A command's trace (either recorder) → (stage results, the timeline over the stages' span,
    warnings, "range" | "kernel", that span's trace): stages from ranges (or kernels), and the
    timeline questions (kernel and API summaries, gaps, launch overhead, streams, waves).
    ``static``: a stage name → its static fields; ``tests``: the ranges kprof.pytest_plugin entered;
    ``split``: the stages already found (found, by, notes): a multi-process report's ranks'."""
    from ..analysis.command import stages_window
    from ..analysis.replay.floors import before_floor, traced_op_floor
    from ..capture.recording import find_stages, stage_results

    # the floor kprof recorded after the command (capture.op_floor): read, then cut off with what followed it
    op_floor, tr = traced_op_floor(tr), before_floor(tr)
    if split is not None:
        found, by, notes = split
    else:
        found, by, notes = find_stages(req, tr, use_cuda, output_tail, work_dir, tests=tests)
    stages = stage_results(static, found, engine)
    if by == "range":  # the timeline questions about the stages' span, not the process's start-up
        tr = stages_window(tr, found)
    tl = tl_lib.analyze(tr, [], sm_count)
    tl.engine = engine
    if use_cuda:
        tl.idle = _idle(tr, found if by == "range" else [], req.plain_steps, op_floor)
    tl.stages = [
        {
            "stage": st.name,
            "kernels_per_iteration": round(sum(st.kernels.values()) / max(1, st.occurrences), 2),
            "gpu_time_ns_median": _median(st.samples_ns) if use_cuda else None,
            "gpu_time_ns_samples": list(st.samples_ns) if use_cuda else [],
            "gpu_span_ns_median": None,
            "gpu_span_ns_samples": [],
            "cpu_range_ns_median": _median(st.cpu_ns),
            "streams": [],
        }
        for st in found
    ]
    warnings = [ResultWarning(kind="matching", message=n) for n in notes]
    if use_cuda and (changed := _profiler_changed_run(tl.idle, req.plain_steps)):
        warnings.append(ResultWarning(kind="timeline", message=changed))
    warnings.append(
        ResultWarning(
            kind="timeline",
            message="a command's timeline: the whole run as the application ran "
            "it (no L2 flush, no clock locking); stages are its "
            f"{'ranges' if by == 'range' else 'kernels grouped by name'}",
        )
    )
    return stages, tl, warnings, by, tr


# The unprofiled step this many times the traced one: more than the host's speed differs between two processes
# (up to 2x on the H200 machine: docs/evidence/machine-model/nsys_call_overhead_2026-11-29.log), so the profiler
# changed how the run went (thread scheduling and the GIL, timing-dependent paths), not only how fast.
PLAIN_SLOWER_X = 2.0


def _profiler_changed_run(idle: dict[str, Any] | None, plain: dict[str, Any] | None) -> str | None:
    """The warning where the step timed without a profiler (nsys mode's plain pass) is much longer than the
    traced step: what slowed the unprofiled run may not be in the trace, and the estimates are the traced
    step's (the replay scales a traced host down to the plain step, never up). None otherwise."""
    traced = ((idle or {}).get("replay") or {}).get("recorded_ns")
    step = (plain or {}).get("step_ns")
    if not traced or not step or step <= PLAIN_SLOWER_X * traced:
        return None
    return (
        f"the step took {step / 1e6:.3f} ms without a profiler but {traced / 1e6:.3f} ms under it "
        f"({step / traced:.1f}x): the profiler changed how the run went (thread scheduling, the GIL, "
        "timing-dependent code), so what slows the unprofiled step may not be in this trace; the estimates "
        "are against the traced step"
    )


def _idle(tr, found, plain: dict[str, Any] | None = None, op_floor: float | None = None) -> dict[str, Any]:
    """Where a command's wall time went (:mod:`kprof_mcp.analysis.idle`): over its stages' kept
    occurrences (first start to last end), or with no ranges over the whole recorded process (its
    first CUDA call to its last GPU activity: start-up, module loading and the host's own work are
    then part of the answer). ``replay``: each idle cause's replayed step time over the same window
    (:func:`kprof_mcp.analysis.replay.gains`), from which the diagnosis takes its estimates; against the
    step timed without a profiler where nsys mode's plain pass timed one (``plain``: a range's step,
    :func:`kprof_mcp.engine.plain.step_of`); ``op_floor``: a lean eager op's issuing time in the same trace
    (:func:`kprof_mcp.analysis.replay.floors.traced_op_floor`), which splits short host gaps between launch and host."""
    from ..analysis import idle, replay

    spans = [st.span for st in found if st.span]
    if spans:
        lo, hi = min(s for s, _ in spans), max(e for _, e in spans)
        occ = max(st.occurrences for st in found)
        return {
            **idle.breakdown(tr, lo, hi, occ).to_dict(),
            "scope": "ranges",
            "replay": replay.gains(
                tr,
                lo,
                hi,
                occ,
                plain_ns=(plain or {}).get("step_ns"),
                read_ns=(plain or {}).get("read_ns"),
                op_floor_ns=op_floor,
            ),
        }
    starts = [float(df["start"].min()) for df in (tr.api, tr.kernels) if not df.empty]
    ends = [float(df["end"].max()) for df in (tr.api, tr.kernels, tr.memops) if not df.empty]
    if not starts:
        return {}
    return {
        **idle.breakdown(tr, min(starts), max(ends), 1, process=True).to_dict(),
        "scope": "process",
        "replay": replay.gains(tr, min(starts), max(ends), 1),
    }


def _median(xs: list[float]) -> float | None:
    import statistics

    return float(statistics.median(xs)) if xs else None


def _fallback_note(req, on_gpu: bool) -> str:
    """Why the Kineto recorder ran instead of Nsight Systems."""
    lines = (
        "; python_backtrace: torch.profiler's Python stacks name each CUDA call's user function (its "
        "definition's line: Kineto records calls, not lines)"
        if getattr(req.options, "python_backtrace", False)
        else ""
    )
    if not on_gpu:
        return "not used: no GPU (CPU activity only, from torch.profiler)" + lines
    return (
        (req.options.timeline_fallback or "not used")
        + "; the timeline comes from CUPTI via torch.profiler"
        + lines
    )


def assemble(
    tr,
    statics: list[dict[str, Any]],
    sm_count: int | None,
    engine: str,
    iters: int,
    plan_kind: str,
    use_cuda: bool,
) -> tuple[list[StageResult], Timing | None, tl_lib.Timeline, list[ResultWarning]]:
    """One recorded trace (either engine) → stage results, the whole-plan time, the timeline
    analysis and the warnings every timeline profile carries."""
    from ..protocol import ExpectedError

    names = [s["name"] for s in statics]
    tl = tl_lib.analyze(tr, names, sm_count)
    tl.engine = engine
    warnings: list[ResultWarning] = []
    stage_results = []
    for static, row in zip(statics, tl.stages):
        # The stage's GPU span per iteration (first kernel start to last kernel end): for a
        # launch-bound stage that is what it costs, not the sum of its tiny kernels.
        samples = row["gpu_span_ns_samples"]
        method = "gpu span per iteration"
        if not samples:  # CPU: the range's wall time per iteration
            samples = [
                float(v) for v in tr.ranges[tr.ranges["name"] == tl_lib.RANGE_PREFIX + static["name"]]["dur"]
            ]
            method = "cpu range wall time per iteration"
        if not samples:
            raise ExpectedError("mode", f"stage {static['name']!r}: nothing recorded in its range")
        stage_results.append(
            StageResult(
                timing=Timing(
                    samples_ns=samples,
                    method=f"{method} ({engine})",
                    l2_flushed=False,
                    stop_reason=f"{iters} recorded iterations",
                ),
                **static,
            )
        )
    plan_total = None
    if tl.iteration_span_ns:
        plan_total = Timing(
            samples_ns=tl.iteration_span_ns,
            method="gpu span per iteration (first kernel start to last kernel end)",
            l2_flushed=False,
            stop_reason=f"{iters} iterations",
        )

    def warn(kind: str, message: str) -> None:
        warnings.append(ResultWarning(kind=kind, message=message))

    if use_cuda:
        warn(
            "timeline",
            "timeline mode: no L2 flush and no clock locking; iterations run back to back as in an "
            "application, so times include warm caches and launch overhead",
        )
        if tl.iterations and tl.iterations != iters:
            warn(
                "timeline",
                f"{tl.iterations} of the {iters} recorded iterations hold kernels matched to their range",
            )
    if plan_kind == "concurrent":
        warn(
            "concurrency",
            "concurrent plan: per-stage durations are each stage's kernel time inside the "
            "overlapped run; the whole-plan span and the stream overlap table are what measure "
            "concurrency",
        )
    for note in tl.notes:
        warn("timeline", note)
    iters_rows = tr.ranges[tr.ranges["name"] == tl_lib.ITER_RANGE] if not tr.ranges.empty else tr.ranges
    if use_cuda and len(iters_rows):
        from ..analysis import idle, replay

        lo, hi = float(iters_rows["start"].min()), float(iters_rows["end"].max())
        tl.idle = {
            **idle.breakdown(tr, lo, hi, len(iters_rows)).to_dict(),
            "scope": "iterations",
            "replay": replay.gains(tr, lo, hi, len(iters_rows)),
        }
    return stage_results, plan_total, tl, warnings


def write_timeline(work_dir: Path, tr, tl, result: ProfileResult, cache_control: str) -> None:
    """timeline/*.csv, timeline.png, then params.json, samples.csv and result.json."""
    import pandas as pd

    from ..capture.artifacts import write_params_and_samples
    from ..render.plots import plot_timeline

    d = safefs.make_dirs(work_dir, work_dir / "timeline")  # no link followed (issue 38)

    def put(name: str, df) -> None:
        safefs.write_atomic(work_dir, d / name, df.to_csv(index=False))

    put("kernels.csv", tr.kernels)
    put("cuda_api.csv", tr.api)
    put("memops.csv", tr.memops)
    for name in (
        "kernel_summary",
        "api_summary",
        "memop_summary",
        "streams",
        "gaps",
        "launch_order",
        "waves",
    ):
        put(f"{name}.csv", pd.DataFrame(getattr(tl, name)))
    put(
        "stages.csv",
        pd.DataFrame([{k: v for k, v in s.items() if not k.endswith("_samples")} for s in tl.stages]),
    )
    try:
        import io

        png = io.BytesIO()
        plot_timeline(tr, tl, png, f"{result.kernel} {result.version}")
        safefs.write_atomic(work_dir, work_dir / "timeline.png", png.getvalue())
    except Exception as e:  # noqa: BLE001 — a plotting failure must not lose the measurements
        result.warnings.append(
            ResultWarning(kind="artifact", message=f"timeline.png not written: {type(e).__name__}: {e}")
        )
    write_rank_picture(work_dir, result)
    write_params_and_samples(work_dir, result, cache_control)


def write_rank_picture(work_dir: Path, result: ProfileResult) -> None:
    """ranks.png, a multi-rank job's per-rank timeline (:mod:`kprof_mcp.render.rank_plot`), when its
    communication summary has a picture; named in the summary (``picture_file``) for report.md."""
    comm = (result.command or {}).get("communication") or {}
    if not comm.get("picture"):
        return
    import io

    from ..render.rank_plot import FILE, plot_ranks

    try:
        png = io.BytesIO()
        plot_ranks(comm, png)
        safefs.write_atomic(work_dir, work_dir / FILE, png.getvalue())
        comm["picture_file"] = FILE
    except Exception as e:  # noqa: BLE001 — a plotting failure must not lose the measurements
        result.warnings.append(
            ResultWarning(kind="artifact", message=f"{FILE} not written: {type(e).__name__}: {e}")
        )
