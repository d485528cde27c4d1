"""The Nsight Compute modes: ``annotation`` (the default first pass: a small metric set and
the cheap rule sections per stage) and ``ncu`` (``--set full``: every section, the source view).

Parent: preflight (GPU, ncu, MIG + clock lock), the ``ncu`` command that wraps the child
(only launches inside each stage's NVTX range are profiled), and after the run
``profiler.json`` plus the report read in a separate child. Child: :meth:`NsightMode.capture`
launches each stage inside its range; :func:`read_output` turns ``profile.ncu-rep`` into stage
results, rule lists, section dumps and the source view.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path
from typing import Any

from ..capture.artifacts import write_params_and_samples
from ..models import ProfileRequest, ProfileResult, ResultWarning, StageResult, Timing
from ..parsers import ncu as ncu_parser
from ..parsers.ncu import KernelRecord, NcuError
from ..render.nsight import nsight_sections, render_source, render_verbose
from ..tools import ncu as ncu_tool
from ..tools import nvidia_smi
from .base import Launch, Mode, ModeError, PreflightEnv

REPORT_FILE = "profile.ncu-rep"
_PCT_KEYS = (
    "tc_pct",
    "sm_pct",
    "dram_pct",
    "achieved_occupancy_pct",
    "theoretical_occupancy_pct",
    "l2_hit_pct",
)
_SUM_KEYS = (
    "duration_ns",
    "local_load_bytes",
    "local_store_bytes",
    "dram_read_bytes",
    "dram_write_bytes",
    "l1_bytes",
)
# What the contract and the report show, by logical metric: missing ones are listed by these names.
SHOWN = {
    "duration_ns": "Duration",
    "tc_pct": "TC%",
    "sm_pct": "SM%",
    "dram_pct": "DRAM%",
    "achieved_occupancy_pct": "Occ% (achieved)",
    "theoretical_occupancy_pct": "Occ% (theoretical)",
    "l2_hit_pct": "L2 hit%",
    "local_load_bytes": "local load bytes",
    "local_store_bytes": "local store bytes",
    "dram_read_bytes": "DRAM read bytes",
    "dram_write_bytes": "DRAM write bytes",
    "waves_per_sm": "waves/SM",
    "registers_per_thread": "regs/thread",
    "shared_mem_per_block_bytes": "smem/block",
}


def _combine(group: list[KernelRecord]) -> dict[str, float | None]:
    """One stage launch may run several kernels: durations and bytes add up, percentages are
    duration-weighted, launch figures come from the longest kernel."""
    if len(group) == 1:
        return dict(group[0].metrics)
    out: dict[str, float | None] = {}
    durs = [r.metrics.get("duration_ns") or 0.0 for r in group]
    total = sum(durs)
    for k in _SUM_KEYS + ncu_parser.ACCOUNTING_COUNTS:
        vals = [r.metrics.get(k) for r in group]
        out[k] = None if any(v is None for v in vals) else float(sum(v for v in vals if v is not None))
    for k in _PCT_KEYS + tuple(k for k in ncu_parser.ACCOUNTING if k not in ncu_parser.ACCOUNTING_COUNTS):
        vals = [r.metrics.get(k) for r in group]
        if any(v is None for v in vals) or total <= 0:
            out[k] = None
        else:
            out[k] = sum(v * d for v, d in zip(vals, durs) if v is not None) / total
    longest = group[max(range(len(group)), key=lambda i: durs[i])]
    for k, v in longest.metrics.items():
        out.setdefault(k, v)
    return out


def match_stages(
    records: list[KernelRecord], stages: list[str], launches: int
) -> tuple[dict[str, list[KernelRecord]], list[ResultWarning]]:
    """Records per stage, by the NVTX range each launch ran in (``kprof_<stage>``). Without NVTX
    information (CSV fallback) launches are assigned in order, which the warning says."""
    warnings: list[ResultWarning] = []
    by_stage: dict[str, list[KernelRecord]] = {s: [] for s in stages}
    if records and all(r.stage is None for r in records):
        if len(records) % max(1, len(stages)) != 0:
            raise ModeError(
                f"the report holds {len(records)} kernels without NVTX ranges; cannot assign "
                f"them to stages {stages}",
                "match",
            )
        per = len(records) // len(stages)
        for i, s in enumerate(stages):
            by_stage[s] = records[i * per : (i + 1) * per]
        warnings.append(
            ResultWarning(
                kind="matching",
                message="the report carries no NVTX ranges; kernels were assigned to stages in launch order",
            )
        )
        return by_stage, warnings
    stray = []
    for r in records:
        if r.stage in by_stage:
            by_stage[r.stage].append(r)
        else:
            stray.append(r.name)
    if stray:
        warnings.append(
            ResultWarning(
                kind="matching",
                message=f"ignored {len(stray)} profiled kernel(s) outside the "
                f"stages' ranges: {sorted(set(stray))}",
            )
        )
    return by_stage, warnings


def stage_result(
    static: dict[str, Any], recs: list[KernelRecord], launches: int, chosen: dict[str, str]
) -> tuple[StageResult, list[ResultWarning]]:
    warnings: list[ResultWarning] = []
    name = static["name"]
    if not recs:
        raise ModeError(
            f"stage {name!r}: Nsight Compute profiled no kernel in NVTX range "
            f"{ncu_parser.range_name(name)!r}; does the stage launch a GPU kernel?",
            "nothing_profiled",
        )
    if len(recs) % launches:
        warnings.append(
            ResultWarning(
                kind="matching",
                stage=name,
                message=f"stage {name}: {len(recs)} kernels for {launches} launches; treated as one launch",
            )
        )
        launches = 1
    per = len(recs) // launches
    groups = [recs[i * per : (i + 1) * per] for i in range(launches)]
    combined = [_combine(g) for g in groups]
    durations = [c.get("duration_ns") for c in combined]
    if any(d is None for d in durations):
        raise ModeError(
            f"stage {name!r}: the report has no gpu__time_duration for a profiled kernel", "metrics"
        )
    med = statistics.median(durations)
    rep = combined[min(range(len(combined)), key=lambda i: abs(durations[i] - med))]
    expected = (static.get("resources") or {}).get("kernel_name")
    names = [r.name for r in groups[0]]
    if expected and expected not in names:
        warnings.append(
            ResultWarning(
                kind="matching",
                stage=name,
                message=f"stage {name}: compiled kernel {expected!r} not among the profiled kernels {names}",
            )
        )
    missing = [SHOWN[k] for k in SHOWN if rep.get(k) is None]
    if missing:
        asked = {
            SHOWN[k]: chosen.get(k, "/".join(ncu_parser.METRICS[k])) for k in SHOWN if rep.get(k) is None
        }
        warnings.append(
            ResultWarning(
                kind="metrics_missing",
                stage=name,
                message=(
                    f"stage {name}: metrics missing from the report (shown as n/a, not 0): "
                    + ", ".join(f"{k} ({v})" for k, v in asked.items())
                ),
            )
        )

    def add(a, b):
        return None if a is None or b is None else a + b

    timing = Timing(
        samples_ns=[float(d) for d in durations],
        method="ncu gpu__time_duration",
        l2_flushed=True,
        stop_reason=f"ncu: {launches} profiled launch(es)",
    )
    res = StageResult(
        timing=timing,
        **static,
        tc_pct=rep.get("tc_pct"),
        dram_pct=rep.get("dram_pct"),
        occupancy_pct=rep.get("achieved_occupancy_pct"),
        l2_hit_pct=rep.get("l2_hit_pct"),
        sm_pct=rep.get("sm_pct"),
        theoretical_occupancy_pct=rep.get("theoretical_occupancy_pct"),
        measured_local_bytes=add(rep.get("local_load_bytes"), rep.get("local_store_bytes")),
        l1_bytes=rep.get("l1_bytes"),
        measured_waves_per_sm=rep.get("waves_per_sm"),
        registers_per_thread=rep.get("registers_per_thread"),
        shared_mem_per_block_bytes=rep.get("shared_mem_per_block_bytes"),
        dram_bytes=add(rep.get("dram_read_bytes"), rep.get("dram_write_bytes")),
        sm_clock_hz=rep.get("sm_clock_hz"),
        ncu_kernels=names,
        ncu_rules=[dict(r, kernel=rec.name) for rec in groups[0] for r in rec.rules],
        missing_metrics=missing,
        accounting={k: float(rep[k]) for k in ncu_parser.ACCOUNTING if rep.get(k) is not None},
    )
    return res, warnings


def read_output(
    req: ProfileRequest, work_dir: Path, log_text: str, profiler: dict[str, Any], full: bool
) -> ProfileResult:
    """Build ``result.json`` and the Nsight artifacts of a captured run in ``work_dir``."""
    capture, log, records, parser = _load(req, work_dir, log_text, profiler, full, None)
    chosen = profiler.get("metrics_chosen", {})
    stage_names = [s["name"] for s in capture["stages"]]
    by_stage, warnings = match_stages(records, stage_names, req.ncu_launches)
    stages: list[StageResult] = []
    for static in capture["stages"]:
        res, w = stage_result(static, by_stage[static["name"]], req.ncu_launches, chosen)
        stages.append(res)
        warnings += w
    return _assemble(req, work_dir, capture, log, parser, profiler, stages, warnings, by_stage, full)


def _load(
    req: ProfileRequest,
    work_dir: Path,
    log_text: str,
    profiler: dict[str, Any],
    full: bool,
    no_report: str | None,
):
    """capture.json, ncu's log and the report's kernel records of a captured run; an actionable
    error when ncu failed or wrote no report (``no_report``: the message for a command that
    launched nothing, where ncu's own 'nothing profiled' is no failure of ncu)."""
    capture = json.loads((work_dir / "capture.json").read_text())
    report = work_dir / REPORT_FILE
    log = ncu_parser.parse_log(log_text)
    failure = ncu_parser.log_failure(log, log_text, report.is_file())
    if failure is not None and not (no_report and failure.kind == "nothing_profiled"):
        raise ModeError(str(failure), failure.kind)
    if not report.is_file():
        said = "; ".join(log.errors + log.warnings)[:600]
        if no_report:
            raise ModeError(f"{no_report} Its log: {said}", "nothing_profiled")
        raise ModeError(f"Nsight Compute wrote no report ({report.name}); its log: {said}", "ncu_failed")
    ncu_path = Path(req.ncu_path) if req.ncu_path else None
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
    _write_nsight_artifacts(work_dir, result, by_stage, full, Path(req.ncu_path) if req.ncu_path else None)
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


def _write_nsight_artifacts(
    work_dir: Path,
    result: ProfileResult,
    by_stage: dict[str, list[KernelRecord]],
    full: bool,
    ncu_path: Path | None,
) -> None:
    import csv

    write_params_and_samples(work_dir, result, cache_control(result))
    ncu_dir = work_dir / "ncu"
    ncu_dir.mkdir(exist_ok=True)
    rows = []
    for stage, recs in by_stage.items():
        for i, r in enumerate(recs):
            rows.append({"stage": stage, "index": i, "kernel": r.name, **r.metrics})
    with open(ncu_dir / "metrics.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["stage", "index", "kernel", *ncu_parser.METRICS])
        w.writeheader()
        w.writerows(rows)
    (ncu_dir / "rules.json").write_text(
        json.dumps(
            {
                s: [dict(rule, kernel=r.name) for r in recs for rule in r.rules]
                for s, recs in by_stage.items()
            },
            indent=2,
            default=str,
        )
    )
    (ncu_dir / "metric_names.json").write_text(
        json.dumps(
            {
                "chosen": result.profiler.get("metrics_chosen", {}),
                "unknown_to_this_ncu": result.profiler.get("metrics_unknown", {}),
                "read_from": {s: (recs[0].metric_source if recs else {}) for s, recs in by_stage.items()},
            },
            indent=2,
        )
    )
    if not full:
        return
    # Every section of every stage's first kernel: report-verbose.md.
    sections: dict[str, list[dict[str, Any]]] = {}
    for stage, recs in by_stage.items():
        if recs and recs[0].sections is not None:
            sections[stage] = recs[0].sections
    if len(sections) < len(by_stage) and ncu_path is not None:
        try:
            launches = ncu_parser.parse_details_csv(ncu_tool.details_csv(work_dir / REPORT_FILE, ncu_path))
            idx = 0
            for stage, recs in by_stage.items():
                if stage not in sections and idx < len(launches):
                    sections[stage] = [
                        {"id": s, "name": s, "metrics": ms} for s, ms in launches[idx]["sections"].items()
                    ]
                idx += len(recs)
        except NcuError as e:
            result.warnings.append(
                ResultWarning(kind="artifact", message=f"report-verbose.md: sections unavailable ({e})")
            )
    (ncu_dir / "sections.json").write_text(json.dumps(sections, indent=2, default=str))
    (work_dir / "report-verbose.md").write_text(render_verbose(result, sections))
    import pandas as pd  # only the deep mode pays for it

    src_dir = work_dir / "source"
    for stage, recs in by_stage.items():
        if not recs or recs[0].source is None:
            continue
        src_dir.mkdir(exist_ok=True)
        view = recs[0].source
        pd.DataFrame(view["rows"]).to_csv(src_dir / f"{stage}.sass.csv", index=False)
        for fname, text in view["files"].items():
            dest = src_dir / f"{stage}.files" / Path(fname).name
            dest.parent.mkdir(exist_ok=True)
            dest.write_text(text)
        (src_dir / f"{stage}.md").write_text(render_source(stage, recs[0].name, view))


def cache_control(result: ProfileResult) -> str:
    cc = result.profiler.get("cache_control", "all")
    return (
        "ncu --cache-control all: every cache flushed before each replay pass"
        if cc == "all"
        else "ncu --cache-control none: caches keep data between replay passes"
    )


class NsightMode(Mode):
    needs = "Nsight Compute (ncu) and an NVIDIA GPU"
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
        ``req.max_kernels``, each with its NVTX ranges recorded (``--nvtx``); stages are formed
        from those ranges when the report is read."""
        return self._launch(req, [], scratch, req.max_kernels, ncu_tool.nvtx_filters(list(req.include)))

    def _launch(
        self,
        req: ProfileRequest,
        stages: list[str],
        scratch: Path,
        launch_count: int | None,
        nvtx_includes: list[str] | None = None,
    ) -> Launch:
        assert req.ncu_path
        path = Path(req.ncu_path)
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
                list(setup["chosen"].values()),
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
            "ncu_version": setup["version"],
            "ncu_path": str(path),
            "command": [c if c != str(base) else "<profile_dir>/profile" for c in cmd[1:]],
            "clock_control": req.clock_control,
            "cache_control": "all",
            "replay_mode": "kernel",
            "nvtx_ranges": [ncu_parser.range_name(s) for s in stages] or nvtx_includes or [],
            "launches_per_stage": req.ncu_launches,
            "metrics_chosen": setup["chosen"],
            "metrics_unknown": {k: list(v) for k, v in setup["unknown"].items()},
            "metric_catalog": setup["catalog"],
        }
        return Launch(
            prefix=cmd, locks_clocks=req.clock_control == "base", profiler=profiler, scratch=scratch
        )

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
        (work_dir / "ncu.log").write_text(record.get("log", ""))
        profiler = dict(
            launch.profiler,
            profiled_process_wall_s=record.get("wall_s"),
            ncu_exit_code=record.get("returncode"),
            nvidia_smi_before=(nvidia_smi.gpus() or [{}])[0],
        )
        (work_dir / "profiler.json").write_text(json.dumps(profiler, indent=2, default=str))
        if on_progress:
            on_progress(0.93, "reading the Nsight Compute report")
        try:
            runner.finish(req.model_dump_json(), work_dir, record.get("log", ""), profiler, control=control)
        except runner.WorkerError as e:
            raise ModeError(f"{e} (partial artifacts kept in {work_dir})", e.kind) from None

    def report(self, result, assessment, others):
        from ..render.report import ModeReport

        return ModeReport(sections=nsight_sections(result, others), timing_note=self.timing_note)

    # ------------------------------------------------------------------ child
    def cache_control(self, result: ProfileResult) -> str:
        return cache_control(result)

    def capture(self, cap) -> dict[str, Any]:
        """Launch each stage ``req.ncu_launches`` times inside its NVTX range, the only launches
        Nsight Compute profiles (``--nvtx-include kprof_<stage>/``); everything before (JIT,
        autotuning, the correctness run) ran outside any range and is not profiled. ncu replays
        each profiled launch once per counter pass, restoring memory in between."""
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
        torch.cuda.synchronize()
        for i, stage in enumerate(cap.plan.stages):
            cap.progress(0.3 + 0.6 * i / len(cap.plan.stages), f"Nsight Compute profiling stage {stage.name}")
            fn = cap.stage_callable(stage)
            for _ in range(req.ncu_launches):
                torch.cuda.nvtx.range_push(ncu_parser.range_name(stage.name))
                fn()
                torch.cuda.nvtx.range_pop()
                torch.cuda.synchronize()
        cap.phase("ncu_profiled_launches")
        capture = {
            "result": cap.fields_json(),
            "stages": json.loads(json.dumps(cap.stages, default=lambda o: o.model_dump())),
        }
        (cap.work_dir / "capture.json").write_text(json.dumps(capture, indent=2, default=str))
        return {"captured": True}

    def read_output(
        self, req: ProfileRequest, work_dir: Path, log: str, profiler: dict[str, Any]
    ) -> ProfileResult:
        if req.command:
            return read_command_output(req, work_dir, log, profiler, self.full_set)
        return read_output(req, work_dir, log, profiler, self.full_set)

    # ------------------------------------------------------------------ a user's command
    def capture_command(self, cc) -> dict[str, Any]:
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
        return {"captured": True}


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
        warnings.append(
            ResultWarning(
                kind="matching",
                message="no range in the command: its kernels are the stages, grouped by name",
            )
        )
    if len(records) >= req.max_kernels:
        warnings.append(
            ResultWarning(
                kind="matching",
                message=f"Nsight Compute stopped after {req.max_kernels} kernels "
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


def _occurrences(recs: list[KernelRecord], entered: int | None = None) -> int:
    """How many times a range ran, so that each occurrence's kernels are summed into one duration.
    Nsight Compute tags each kernel with its range's name only, not the occurrence. ``entered``:
    how many times ``kprof.range`` counted the range entered, used when its kernels divide evenly
    into that many occurrences. Otherwise the shortest period of the kernel-name sequence (a range
    launching A, A, B each time gives A, A, B, A, A, B: period 3): counting only the first name's
    launches would split one occurrence of an eager chain that repeats a kernel name (PyTorch's
    elementwise kernels) into several and report one kernel's time as the range's."""
    n = len(recs)
    if entered and n % entered == 0:
        return entered
    names = [r.name for r in recs]
    for period in range(1, n + 1):
        if n % period == 0 and all(names[i] == names[i % period] for i in range(n)):
            return n // period
    return 1
