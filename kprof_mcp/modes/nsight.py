"""The Nsight Compute modes (``annotation`` and ``ncu``) after the profiled process exited:
read ``profile.ncu-rep``, match each profiled kernel to its stage, and turn the counters into
stage results, rule lists, section dumps and the source view.

Runs in a child process (``python -m kprof_mcp.worker finish``): a corrupt report that makes
the native ``ncu_report`` library crash takes down that child, never the server.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from .. import ncu as ncu_lib
from .. import render
from ..models import ProfileRequest, ProfileResult, StageResult, Timing

REPORT_FILE = "profile.ncu-rep"
_PCT_KEYS = ("tc_pct", "sm_pct", "dram_pct", "achieved_occupancy_pct", "theoretical_occupancy_pct", "l2_hit_pct")
_SUM_KEYS = ("duration_ns", "local_load_bytes", "local_store_bytes", "dram_read_bytes", "dram_write_bytes")
# What the contract and the report show, by logical metric: missing ones are listed by these names.
SHOWN = {"duration_ns": "Duration", "tc_pct": "TC%", "sm_pct": "SM%", "dram_pct": "DRAM%",
         "achieved_occupancy_pct": "Occ% (achieved)", "theoretical_occupancy_pct": "Occ% (theoretical)",
         "l2_hit_pct": "L2 hit%", "local_load_bytes": "local load bytes", "local_store_bytes": "local store bytes",
         "dram_read_bytes": "DRAM read bytes", "dram_write_bytes": "DRAM write bytes",
         "waves_per_sm": "waves/SM", "registers_per_thread": "regs/thread",
         "shared_mem_per_block_bytes": "smem/block"}


class FinishError(RuntimeError):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def _combine(group: list[ncu_lib.KernelRecord]) -> dict[str, float | None]:
    """One stage launch may run several kernels: durations and bytes add up, percentages are
    duration-weighted, launch figures come from the longest kernel."""
    if len(group) == 1:
        return dict(group[0].metrics)
    out: dict[str, float | None] = {}
    durs = [r.metrics.get("duration_ns") or 0.0 for r in group]
    total = sum(durs)
    for k in _SUM_KEYS:
        vals = [r.metrics.get(k) for r in group]
        out[k] = None if any(v is None for v in vals) else float(sum(v for v in vals if v is not None))
    for k in _PCT_KEYS:
        vals = [r.metrics.get(k) for r in group]
        if any(v is None for v in vals) or total <= 0:
            out[k] = None
        else:
            out[k] = sum(v * d for v, d in zip(vals, durs) if v is not None) / total
    longest = group[max(range(len(group)), key=lambda i: durs[i])]
    for k, v in longest.metrics.items():
        out.setdefault(k, v)
    return out


def match_stages(records: list[ncu_lib.KernelRecord], stages: list[str], launches: int
                 ) -> tuple[dict[str, list[ncu_lib.KernelRecord]], list[str]]:
    """Records per stage, by the NVTX range each launch ran in (``kprof_<stage>``). Without NVTX
    information (CSV fallback) launches are assigned in order, which the warning says."""
    warnings: list[str] = []
    by_stage: dict[str, list[ncu_lib.KernelRecord]] = {s: [] for s in stages}
    if records and all(r.stage is None for r in records):
        if len(records) % max(1, len(stages)) != 0:
            raise FinishError("match", f"the report holds {len(records)} kernels without NVTX ranges; cannot assign "
                                       f"them to stages {stages}")
        per = len(records) // len(stages)
        for i, s in enumerate(stages):
            by_stage[s] = records[i * per:(i + 1) * per]
        warnings.append("the report carries no NVTX ranges; kernels were assigned to stages in launch order")
        return by_stage, warnings
    stray = []
    for r in records:
        if r.stage in by_stage:
            by_stage[r.stage].append(r)
        else:
            stray.append(r.name)
    if stray:
        warnings.append(f"ignored {len(stray)} profiled kernel(s) outside the stages' ranges: {sorted(set(stray))}")
    return by_stage, warnings


def stage_result(static: dict[str, Any], recs: list[ncu_lib.KernelRecord], launches: int,
                 chosen: dict[str, str]) -> tuple[StageResult, list[str]]:
    warnings: list[str] = []
    name = static["name"]
    if not recs:
        raise FinishError("nothing_profiled", f"stage {name!r}: Nsight Compute profiled no kernel in NVTX range "
                                              f"{ncu_lib.range_name(name)!r}; does the stage launch a GPU kernel?")
    if len(recs) % launches:
        warnings.append(f"stage {name}: {len(recs)} kernels for {launches} launches; treated as one launch")
        launches = 1
    per = len(recs) // launches
    groups = [recs[i * per:(i + 1) * per] for i in range(launches)]
    combined = [_combine(g) for g in groups]
    durations = [c.get("duration_ns") for c in combined]
    if any(d is None for d in durations):
        raise FinishError("metrics", f"stage {name!r}: the report has no gpu__time_duration for a profiled kernel")
    med = statistics.median(durations)
    rep = combined[min(range(len(combined)), key=lambda i: abs(durations[i] - med))]
    expected = (static.get("resources") or {}).get("kernel_name")
    names = [r.name for r in groups[0]]
    if expected and expected not in names:
        warnings.append(f"stage {name}: compiled kernel {expected!r} not among the profiled kernels {names}")
    missing = [SHOWN[k] for k in SHOWN if rep.get(k) is None]
    if missing:
        asked = {SHOWN[k]: chosen.get(k, "/".join(ncu_lib.METRICS[k])) for k in SHOWN if rep.get(k) is None}
        warnings.append(f"stage {name}: metrics missing from the report (shown as n/a, not 0): "
                        + ", ".join(f"{k} ({v})" for k, v in asked.items()))

    def add(a, b):
        return None if a is None or b is None else a + b

    timing = Timing(samples_ns=[float(d) for d in durations], method="ncu gpu__time_duration",
                    l2_flushed=True, stop_reason=f"ncu: {launches} profiled launch(es)")
    res = StageResult(
        timing=timing, **static,
        tc_pct=rep.get("tc_pct"), dram_pct=rep.get("dram_pct"), occupancy_pct=rep.get("achieved_occupancy_pct"),
        l2_hit_pct=rep.get("l2_hit_pct"), sm_pct=rep.get("sm_pct"),
        theoretical_occupancy_pct=rep.get("theoretical_occupancy_pct"),
        measured_local_bytes=add(rep.get("local_load_bytes"), rep.get("local_store_bytes")),
        measured_waves_per_sm=rep.get("waves_per_sm"), registers_per_thread=rep.get("registers_per_thread"),
        shared_mem_per_block_bytes=rep.get("shared_mem_per_block_bytes"),
        dram_bytes=add(rep.get("dram_read_bytes"), rep.get("dram_write_bytes")), sm_clock_hz=rep.get("sm_clock_hz"),
        ncu_kernels=names, ncu_rules=[dict(r, kernel=rec.name) for rec in groups[0] for r in rec.rules],
        missing_metrics=missing)
    return res, warnings


def finish(req: ProfileRequest, work_dir: Path, log_text: str, profiler: dict[str, Any]) -> ProfileResult:
    """Build ``result.json`` and the Nsight artifacts of a captured run in ``work_dir``."""
    capture = json.loads((work_dir / "capture.json").read_text())
    report = work_dir / REPORT_FILE
    log = ncu_lib.parse_log(log_text)
    failure = ncu_lib.log_failure(log, log_text, report.is_file())
    if failure is not None:
        raise FinishError(failure.kind, str(failure))
    if not report.is_file():
        raise FinishError("ncu_failed", f"Nsight Compute wrote no report ({report.name}); its log: "
                                        + "; ".join(log.errors + log.warnings)[:600])
    chosen = profiler.get("metrics_chosen", {})
    ncu_path = Path(req.ncu_path) if req.ncu_path else None
    try:
        records, parser = ncu_lib.read_report(report, chosen, want_source=req.mode == "ncu", ncu=ncu_path)
    except ncu_lib.NcuError as e:
        raise FinishError(e.kind, str(e)) from None
    stage_names = [s["name"] for s in capture["stages"]]
    by_stage, warnings = match_stages(records, stage_names, req.ncu_launches)
    stages: list[StageResult] = []
    for static in capture["stages"]:
        res, w = stage_result(static, by_stage[static["name"]], req.ncu_launches, chosen)
        stages.append(res)
        warnings += w
    passes = [n for _, n in log.passes]
    profiler = dict(profiler, parser=parser, report_file=REPORT_FILE, passes_per_launch=passes,
                    profiled_launches=len(log.passes), ncu_warnings=log.warnings[:20])
    fields = capture["result"]
    smi = profiler.get("nvidia_smi_before") or {}
    if smi and not fields["device"].get("clocks_before"):
        fields["device"]["clocks_before"] = {k: v for k, v in smi.items() if k.startswith(("clocks.", "power", "temp"))}
        fields["device"]["driver_version"] = fields["device"].get("driver_version") or smi.get("driver_version")
    result = ProfileResult(**{**fields, "stages": stages, "profiler": profiler,
                              "warnings": list(fields.get("warnings", [])) + warnings})
    result.warnings += _quality_warnings(result)
    _write_nsight_artifacts(work_dir, result, records, by_stage, req, ncu_path)
    return result


def _quality_warnings(result: ProfileResult) -> list[str]:
    out = []
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
                out.append(f"stage {s.name}: profiled at an SM clock of {s.sm_clock_hz / 1e6:.0f} MHz "
                           f"({100 * ratio:.0f}% of the {max_mhz:.0f} MHz maximum: "
                           f"{'locked to base by ncu' if d.clocks_locked else 'clocks not locked'}); "
                           "compute-bound durations are correspondingly longer than at boost, so compare "
                           "ncu durations only with ncu durations")
    if result.request.get("ncu_launches", 1) == 1:
        out.append("one profiled launch per stage: Nsight Compute durations (locked clocks, caches flushed) are "
                   "stable, but no spread is measured; use ncu_launches > 1 or mode 'event' for a spread")
    return out


def _write_nsight_artifacts(work_dir: Path, result: ProfileResult, records: list[ncu_lib.KernelRecord],
                            by_stage: dict[str, list[ncu_lib.KernelRecord]], req: ProfileRequest,
                            ncu_path: Path | None) -> None:
    import csv

    from ..worker import write_params_and_samples

    write_params_and_samples(work_dir, result)
    ncu_dir = work_dir / "ncu"
    ncu_dir.mkdir(exist_ok=True)
    rows = []
    for stage, recs in by_stage.items():
        for i, r in enumerate(recs):
            rows.append({"stage": stage, "index": i, "kernel": r.name, **r.metrics})
    with open(ncu_dir / "metrics.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["stage", "index", "kernel", *ncu_lib.METRICS])
        w.writeheader()
        w.writerows(rows)
    (ncu_dir / "rules.json").write_text(json.dumps(
        {s: [dict(rule, kernel=r.name) for r in recs for rule in r.rules] for s, recs in by_stage.items()},
        indent=2, default=str))
    (ncu_dir / "metric_names.json").write_text(json.dumps(
        {"chosen": result.profiler.get("metrics_chosen", {}),
         "unknown_to_this_ncu": result.profiler.get("metrics_unknown", {}),
         "read_from": {s: (recs[0].metric_source if recs else {}) for s, recs in by_stage.items()}},
        indent=2))
    if req.mode != "ncu":
        return
    # Every section of every stage's first kernel: report-verbose.md.
    sections: dict[str, list[dict[str, Any]]] = {}
    for stage, recs in by_stage.items():
        if recs and recs[0].sections is not None:
            sections[stage] = recs[0].sections
    if len(sections) < len(by_stage) and ncu_path is not None:
        try:
            launches = ncu_lib.parse_details_csv(ncu_lib.details_csv(work_dir / REPORT_FILE, ncu_path))
            idx = 0
            for stage, recs in by_stage.items():
                if stage not in sections and idx < len(launches):
                    sections[stage] = [{"id": s, "name": s, "metrics": ms} for s, ms in launches[idx]["sections"].items()]
                idx += len(recs)
        except ncu_lib.NcuError as e:
            result.warnings.append(f"report-verbose.md: sections unavailable ({e})")
    (ncu_dir / "sections.json").write_text(json.dumps(sections, indent=2, default=str))
    (work_dir / "report-verbose.md").write_text(render.render_verbose(result, sections))
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
        (src_dir / f"{stage}.md").write_text(render.render_source(stage, recs[0].name, view))
