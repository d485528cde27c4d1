"""Reading a captured Nsight Compute run (in the reading child): capture.json, ncu's log and the
report's kernel records become ``result.json``, for a package's stages or a command's ranges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import safefs
from ..models import ProfileRequest, ProfileResult, ResultWarning, StageResult
from ..parsers import ncu as ncu_parser
from ..parsers.ncu import KernelRecord, NcuError
from ..tools import ncu as ncu_tool
from .base import ModeError
from .nsight_artifacts import REPORT_FILE, _write_nsight_artifacts
from .nsight_stages import _occurrences, match_stages, stage_result, unprofiled_stage


def read_output(
    req: ProfileRequest, work_dir: Path, log_text: str, profiler: dict[str, Any], full: bool
) -> ProfileResult:
    """Build ``result.json`` and the Nsight artifacts of a captured run in ``work_dir``."""
    launch_timing = _captured(work_dir).get("launch_timing")
    capture, log, records, parser = _load(
        req, work_dir, log_text, profiler, full, None, empty_ok=launch_timing is not None
    )
    chosen = profiler.get("metrics_chosen", {})
    stage_names = [s["name"] for s in capture["stages"]]
    by_stage, warnings = match_stages(records, stage_names, req.options.ncu_launches)
    stages: list[StageResult] = []
    for static in capture["stages"]:
        recs = by_stage[static["name"]]
        if not recs and launch_timing and static["name"] in launch_timing:
            # Its launches in its range launched nothing (a cached result, work skipped): no kernel
            # figure exists; the CUDA-event time outside the ranges stands, said and marked suspect.
            res, w = unprofiled_stage(static, launch_timing[static["name"]], req.options.ncu_launches)
        else:
            res, w = stage_result(static, recs, req.options.ncu_launches, chosen)
            timing = (launch_timing or {}).get(static["name"])
            w = [
                *w,
                *(left_running(static["name"], res, timing) or other_streams(static["name"], recs, timing)),
            ]
        stages.append(res)
        warnings += w
    return _assemble(req, work_dir, capture, log, parser, profiler, stages, warnings, by_stage, full)


# CUDA events on the timed stream around a stage's launches that measure under this share of its
# profiled kernel time did not wait for its kernels (same-stream events include them and the launch; a
# warm L2 and a boost clock make them faster than Nsight Compute's cold, base-clock figure, not 2x).
# A gate ("is it there"), not a fitted share.
EVENTS_UNDER = 0.5


def left_running(name: str, res: StageResult, timing: dict[str, Any] | None) -> list[ResultWarning]:
    """A ``concurrency`` warning when the CUDA events on the timed stream around the stage's unprofiled
    launches measure under :data:`EVENTS_UNDER` of its profiled kernel time and the device was still
    busy after their last event (a device-wide sync took longer than on an idle device): its kernels
    ran on a stream that the caller's stream does not wait for (event mode sees this as kernels its
    runs did not launch on the timed stream). Under Nsight Compute every unprofiled launch still pays its
    interception (~125-170 µs on an H200, 2026-11-26), so only kernels of more than twice that are
    seen; a shorter kernel on a private stream is not (docs/evidence/tampered-heldback: `sidestream`)."""
    t = timing or {}
    left, events = t.get("left_running_ns"), sorted(t.get("samples_ns") or [])
    kernel = res.timing.median_ns
    if not events or not kernel or left is None:
        return []
    ev = events[len(events) // 2]
    if ev >= EVENTS_UNDER * kernel or left <= 1e3:
        return []
    return [
        ResultWarning(
            kind="concurrency",
            stage=name,
            message=f"stage {name}: CUDA events on the timed stream measured {ev / 1e3:.1f} µs around its "
            f"launches, under its profiled kernels' {kernel / 1e3:.1f} µs, and the device stayed busy "
            f"{left / 1e3:.1f} µs after them: its kernels ran on a stream the caller's stream does not wait "
            "for, so a caller reading the output right after the call races them",
        )
    ]


def other_streams(name: str, recs: list[KernelRecord], timing: dict[str, Any] | None) -> list[ResultWarning]:
    """A ``concurrency`` warning when Nsight Compute profiled some of the stage's launches on a stream
    other than the one its runs are timed on (the caller's current stream, by the driver's stream id):
    work the caller's stream may not wait for, whatever the kernels' length (:func:`left_running` sees
    only long ones under Nsight Compute). A package that makes the caller's stream wait for its own
    streams (an event) is warned too: the profile cannot tell."""
    timed = (timing or {}).get("stream_id")
    if timed is None:
        return []
    other = sorted({r.stream_id for r in recs if r.stream_id is not None and r.stream_id != timed})
    if not other:
        return []
    n = sum(1 for r in recs if r.stream_id in other)
    return [
        ResultWarning(
            kind="concurrency",
            stage=name,
            message=f"stage {name}: {n} of its {len(recs)} profiled launches ran on stream "
            f"{', '.join(map(str, other))}, not on the caller's stream {timed}: unless the caller's stream "
            "waits for them (an event), a caller reading the output right after the call races them",
        )
    ]


def _captured(work_dir: Path) -> dict[str, Any]:
    return json.loads(safefs.read_text(work_dir, work_dir / "capture.json", limit=64 << 20))


def _load(
    req: ProfileRequest,
    work_dir: Path,
    log_text: str,
    profiler: dict[str, Any],
    full: bool,
    no_report: str | None,
    empty_ok: bool = False,
):
    """capture.json, ncu's log and the report's kernel records of a captured run; an actionable
    error when ncu failed or wrote no report (``no_report``: the message for a command that
    launched nothing, where ncu's own 'nothing profiled' is no failure of ncu). ``empty_ok``: a
    package's run whose stages have a time from outside the profiled ranges: ncu profiling no
    kernel at all gives no records (each stage then says it), not an error."""
    capture = _captured(work_dir)
    report = work_dir / REPORT_FILE
    log = ncu_parser.parse_log(log_text)
    failure = ncu_parser.log_failure(log, log_text, report.is_file())
    if empty_ok and failure is not None and failure.kind == "nothing_profiled" and not report.is_file():
        return capture, log, [], "none: Nsight Compute profiled no kernel (no report)"
    if failure is not None and not (no_report and failure.kind == "nothing_profiled"):
        raise ModeError(str(failure), failure.kind)
    if not report.is_file():
        said = "; ".join(log.errors + log.warnings)[:600]
        if no_report:
            raise ModeError(f"{no_report} Its log: {said}", "nothing_profiled")
        raise ModeError(f"Nsight Compute wrote no report ({report.name}); its log: {said}", "ncu_failed")
    ncu_path = Path(req.options.ncu_path) if req.options.ncu_path else None
    try:
        records, parser = ncu_tool.read_report(
            report, profiler.get("metrics_chosen", {}), want_source=full, ncu=ncu_path
        )
    except NcuError as e:
        raise ModeError(str(e), e.kind) from None
    return capture, log, records, parser


def _assemble(
    req: ProfileRequest,
    work_dir: Path,
    capture: dict[str, Any],
    log,
    parser: str,
    profiler: dict[str, Any],
    stages: list[StageResult],
    warnings: list[ResultWarning],
    by_stage: dict[str, list[KernelRecord]],
    full: bool,
) -> ProfileResult:
    """The result of a captured run (a package's or a command's) from its stages: ncu's run facts
    in ``profiler``, the clocks nvidia-smi read before, the quality warnings, the artifacts."""
    passes = [n for _, n in log.passes]
    profiler = dict(
        profiler,
        parser=parser,
        report_file=REPORT_FILE,
        passes_per_launch=passes,
        profiled_launches=len(log.passes),
        ncu_warnings=log.warnings[:20],
    )
    fields = capture["result"]
    smi = profiler.get("nvidia_smi_before") or {}
    if smi and not fields["device"].get("clocks_before"):
        fields["device"]["clocks_before"] = {
            k: v for k, v in smi.items() if k.startswith(("clocks.", "power", "temp"))
        }
        fields["device"]["driver_version"] = fields["device"].get("driver_version") or smi.get(
            "driver_version"
        )
    result = ProfileResult(
        **{
            **fields,
            "stages": stages,
            "profiler": profiler,
            "warnings": list(fields.get("warnings", [])) + warnings,
        }
    )
    result.warnings += quality_warnings(result)
    _write_nsight_artifacts(
        work_dir, result, by_stage, full, Path(req.options.ncu_path) if req.options.ncu_path else None
    )
    return result


def quality_warnings(result: ProfileResult) -> list[ResultWarning]:
    """Clocks the kernels actually ran at, and the missing spread of a single launch."""
    out: list[ResultWarning] = []
    d = result.device
    max_mhz = None
    try:
        max_mhz = float(d.clocks_before.get("clocks.max.sm"))
    except (TypeError, ValueError):
        pass
    for s in result.stages:
        if s.sm_clock_hz and max_mhz:
            ratio = s.sm_clock_hz / 1e6 / max_mhz
            if ratio < 0.95:
                out.append(
                    ResultWarning(
                        kind="clocks",
                        stage=s.name,
                        message=f"stage {s.name}: profiled at an SM clock of {s.sm_clock_hz / 1e6:.0f} MHz "
                        f"({100 * ratio:.0f}% of the {max_mhz:.0f} MHz maximum: "
                        f"{'locked to base by ncu' if d.clocks_locked else 'clocks not locked'}); "
                        "compute-bound durations are correspondingly longer than at boost, so compare "
                        "ncu durations only with ncu durations",
                    )
                )
    if result.request.get("ncu_launches", 1) == 1:
        out.append(
            ResultWarning(
                kind="no_spread",
                message="one profiled launch per stage: Nsight Compute durations (locked clocks, caches flushed) are "
                "stable, but no spread is measured; use ncu_launches > 1 or mode 'event' for a spread",
            )
        )
    return out


def read_command_output(
    req: ProfileRequest, work_dir: Path, log_text: str, profiler: dict[str, Any], full: bool
) -> ProfileResult:
    """A command's report: kernels grouped by the innermost selected NVTX range they ran in (or
    by name), each group a stage with the same counters, rules and source view as a package's."""
    from ..analysis.command import group_records, stage_static

    capture, log, records, parser = _load(
        req,
        work_dir,
        log_text,
        profiler,
        full,
        "Nsight Compute profiled no kernel of the command (no report): does it launch GPU kernels?",
    )
    chosen = profiler.get("metrics_chosen", {})
    groups, by, notes = group_records(records, list(req.include))
    if req.include and by != "range":
        raise ModeError(
            f"no profiled kernel ran in a range matching include={list(req.include)}; ranges seen: "
            f"{sorted({n for r in records for n in r.nvtx_ranges})[:30] or 'none'}",
            "nothing_profiled",
        )
    fields = capture["result"]
    warnings = [ResultWarning(kind="matching", message=n) for n in notes]
    if by == "kernel":
        entered = sorted((k, v) for k, v in (capture.get("range_occurrences") or {}).items() if v)
        seen = ", ".join(f"{k} x{v}" for k, v in entered[:8])
        warnings.append(
            ResultWarning(
                kind="matching",
                message="no range in the command: its kernels are the stages, grouped by name"
                if not entered
                else f"no profiled kernel ran in the command's ranges ({seen}): the {len(records)} launches "
                "profiled ran outside them (before the first, most likely), so its kernels are the stages, "
                f"grouped by name; name the ranges to profile (include=[{entered[0][0]!r}]) or raise "
                "max_kernels",
            )
        )
    if len(records) >= req.options.max_kernels:
        warnings.append(
            ResultWarning(
                kind="matching",
                message=f"Nsight Compute stopped after {req.options.max_kernels} kernels "
                "(max_kernels): later launches were not profiled",
            )
        )
    stages: list[StageResult] = []
    by_stage: dict[str, list[KernelRecord]] = {}
    for name, recs in groups.items():
        static = stage_static(name, req.stage_models.get(name), fields["device"], capture.get("peaks") or {})
        # One launch of the stage = one occurrence of the range; a range that ran its kernels a
        # varying number of times is treated as one launch (stage_result says so).
        launches = (
            _occurrences(recs, (capture.get("range_occurrences") or {}).get(name))
            if by == "range"
            else len(recs)
        )
        res, w = stage_result(static, recs, max(1, launches), chosen)
        stages.append(res)
        by_stage[name] = recs
        warnings += w
    fields["command"] = dict(fields.get("command") or {}, stages_from=by)
    return _assemble(req, work_dir, capture, log, parser, profiler, stages, warnings, by_stage, full)
