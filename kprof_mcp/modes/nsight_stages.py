"""Nsight Compute's kernel records turned into stage results: the kernels of one stage launch
combined, records matched to stages by NVTX range (or in launch order), each stage's timing and
counters, and how many times a command's range ran."""

from __future__ import annotations

import statistics
from typing import Any

from ..models import ResultWarning, StageResult, Timing
from ..parsers import ncu as ncu_parser
from ..parsers.ncu import KernelRecord
from .base import ModeError

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
    if "grid_blocks" not in static and rep.get("grid_size"):
        # A command's stage has no launcher to ask (a package's None is a persistent grid, by design): its
        # longest kernel's grid as ncu launched it (waves count block slots: 512 blocks at 0.48 fill 132 SMs).
        static = dict(static, grid_blocks=int(rep["grid_size"]))
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
        dram_read_bytes=rep.get("dram_read_bytes"),
        sm_clock_hz=rep.get("sm_clock_hz"),
        ncu_kernels=names,
        ncu_rules=[dict(r, kernel=rec.name) for rec in groups[0] for r in rec.rules],
        missing_metrics=missing,
        accounting={k: float(rep[k]) for k in ncu_parser.ACCOUNTING if rep.get(k) is not None},
    )
    return res, warnings


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


def unprofiled_stage(
    static: dict[str, Any], launch_timing: dict[str, Any], launches: int
) -> tuple[StageResult, list[ResultWarning]]:
    """A stage of which Nsight Compute profiled no kernel in its range: its ``launches`` there launched
    nothing (a result cached after the first call, work skipped when the inputs repeat) or only work
    that is no kernel. No counter and no kernel duration exist; its time is the CUDA events around its
    launches outside the profiled ranges (:func:`kprof_mcp.modes.nsight.unprofiled_launch_times`),
    ``kernel_recorded`` False, with a ``timing`` warning that says so (the diagnosis marks the stage
    suspect: :func:`kprof_mcp.analysis.peaks.suspect_reasons`)."""
    name = static["name"]
    timing = Timing(
        **{k: launch_timing[k] for k in ("samples_ns", "method", "l2_flushed", "stop_reason")},
        kernel_recorded=False,  # CUDA events in place of a kernel time (analysis/peaks.py: 'suspect')
    )
    warning = ResultWarning(
        kind="timing",
        stage=name,
        message=f"kernel time not measured for stage {name}: Nsight Compute profiled no kernel in its NVTX "
        f"range {ncu_parser.range_name(name)!r}, so its {launches} launch(es) there launched none (a result "
        "cached after the first call, or work skipped when the inputs repeat) and no counter was read; its "
        f"time is CUDA events around {timing.runs} launches outside the profiled ranges, which include "
        "launch latency",
    )
    return StageResult(timing=timing, **static, missing_metrics=list(SHOWN.values())), [warning]
