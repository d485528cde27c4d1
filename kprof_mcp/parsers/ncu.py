"""Reading what Nsight Compute writes: its console log, the ``--query-metrics`` catalog, the
``.ncu-rep`` report (through NVIDIA's ``ncu_report`` module, passed in by the caller) and the
``ncu --import --csv`` details page.

Pure: every function takes text or an already loaded module and returns records; nothing
here runs ncu or looks for an installation (that is :mod:`kprof_mcp.tools.ncu`). Tested on
reports recorded on an H100 (``tests/fixtures/h100_ncu``).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RANGE_PREFIX = "kprof_"

# Logical metric -> candidate metric names, the first one the installed Nsight Compute knows
# wins. Nsight Compute renames metrics between versions and chips (on 2025.3 with the full
# set, dram__throughput is absent from the report while gpu__dram_throughput is present).
METRICS: dict[str, tuple[str, ...]] = {
    "duration_ns": ("gpu__time_duration.sum",),
    "tc_pct": (
        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active",
    ),
    "sm_pct": ("sm__throughput.avg.pct_of_peak_sustained_elapsed",),
    "dram_pct": (
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    "achieved_occupancy_pct": ("sm__warps_active.avg.pct_of_peak_sustained_active",),
    "theoretical_occupancy_pct": ("sm__maximum_warps_per_active_cycle_pct",),
    "l2_hit_pct": ("lts__t_sector_hit_rate.pct",),
    "local_load_bytes": ("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",),
    "local_store_bytes": ("l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",),
    "l1_bytes": ("l1tex__t_bytes.sum",),  # all L1TEX traffic: the denominator of the spill share
    "dram_read_bytes": ("dram__bytes_read.sum",),
    "dram_write_bytes": ("dram__bytes_write.sum",),
    "waves_per_sm": ("launch__waves_per_multiprocessor",),
    "registers_per_thread": ("launch__registers_per_thread",),
    "shared_mem_per_block_bytes": ("launch__shared_mem_per_block",),
    "grid_size": ("launch__grid_size",),
    "block_size": ("launch__block_size",),
    "sm_clock_hz": ("sm__cycles_elapsed.avg.per_second",),
    "dram_clock_hz": ("dram__cycles_elapsed.avg.per_second",),
}
# Where the time went (issue 26): the hardware's own accounting of a kernel's cycles, the figures
# ncu's WarpStateStats, ComputeWorkloadAnalysis, InstructionStats and MemoryWorkloadAnalysis
# sections are built from. Stall reasons are cycles warps spent stalled per issued instruction
# (their sum, with "selected", is the average cycles between a warp's issues): normalised, they
# say what share of the warps' time each reason owns.
STALL_REASONS = (
    "long_scoreboard",
    "short_scoreboard",
    "lg_throttle",
    "mio_throttle",
    "math_pipe_throttle",
    "tex_throttle",
    "barrier",
    "membar",
    "wait",
    "branch_resolving",
    "no_instruction",
    "drain",
    "dispatch_stall",
    "imc_miss",
    "misc",
    "sleeping",
    "gmma",
    "not_selected",
    "selected",
)
ACCOUNTING: dict[str, tuple[str, ...]] = {
    **{
        f"stall_{r}": (f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio",)
        for r in STALL_REASONS
    },
    "issue_active_pct": ("smsp__issue_active.avg.pct_of_peak_sustained_active",),
    # pipe utilisation, % of the pipe's peak while the SM was active
    "pipe_fma_pct": ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",),
    "pipe_alu_pct": ("sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",),
    "pipe_fp64_pct": ("sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",),
    "pipe_lsu_pct": ("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",),
    "pipe_xu_pct": ("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",),
    "pipe_shared_pct": ("sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active",),
    # instruction mix (warp-level instructions; FFMA per thread)
    "inst_executed": ("smsp__inst_executed.sum",),
    "ffma_thread_inst": ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",),
    "hmma_inst": ("sm__inst_executed_pipe_tensor_op_hmma.sum",),
    "gmma_inst": ("sm__inst_executed_pipe_tensor_op_gmma.sum",),
    # global atomics and reductions: L1 requests (warp instructions) and the L2 sectors they touch
    "global_atom_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",),
    "global_red_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",),
    "l2_atom_sectors": ("lts__t_sectors_srcunit_tex_op_atom.sum",),
    "l2_red_sectors": ("lts__t_sectors_srcunit_tex_op_red.sum",),
    # coalescing: sectors per request of global loads and stores (4 is a fully used 128-byte line for
    # 4-byte elements; 32 is one sector per thread)
    "global_ld_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",),
    "global_ld_sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",),
    "global_st_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",),
    "global_st_sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",),
    # shared memory: bank conflicts among its wavefronts
    "shared_bank_conflicts": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",),
    "shared_wavefronts": ("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",),
    # divergence: active threads per executed warp instruction (32: none)
    "threads_per_inst": ("smsp__thread_inst_executed_per_inst_executed.ratio",),
    "divergent_branch_targets": ("smsp__sass_branch_targets_threads_divergent.sum",),
    # what limits occupancy: blocks per SM each resource allows (launch statistics, no replay pass)
    "occ_limit_registers": ("launch__occupancy_limit_registers",),
    "occ_limit_shared_mem": ("launch__occupancy_limit_shared_mem",),
    "occ_limit_warps": ("launch__occupancy_limit_warps",),
    "occ_limit_blocks": ("launch__occupancy_limit_blocks",),
}
METRICS.update(ACCOUNTING)
# Counts add up across the kernels of one stage launch; the rest are duration-weighted.
ACCOUNTING_COUNTS = (
    "inst_executed",
    "ffma_thread_inst",
    "hmma_inst",
    "gmma_inst",
    "global_atom_requests",
    "global_red_requests",
    "l2_atom_sectors",
    "l2_red_sectors",
    "global_ld_requests",
    "global_ld_sectors",
    "global_st_requests",
    "global_st_sectors",
    "shared_bank_conflicts",
    "shared_wavefronts",
    "divergent_branch_targets",
)

# Launch and occupancy metrics come from the launch itself, not from hardware counters, and
# are not listed by ``ncu --query-metrics``.
_NON_COUNTER_PREFIXES = ("launch__", "device__", "sm__maximum_warps_per_active_cycle")

ANNOTATION_SECTIONS = (
    "SpeedOfLight",
    "LaunchStats",
    "Occupancy",
)  # cheap sections whose rules estimate speed-ups
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"

MSG_TYPES = {0: "NONE", 1: "OK", 2: "OPTIMIZATION", 3: "WARNING", 4: "ERROR"}
SPEEDUP_TYPES = {0: "unknown", 1: "local", 2: "global"}


class NcuError(RuntimeError):
    """Nsight Compute is missing, not permitted, or its run failed; the message says what to do."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


# ----------------------------------------------------------------------------- metric names


def parse_metric_catalog(text: str) -> set[str]:
    """Base names from ``ncu --query-metrics --csv`` output."""
    rows = csv.reader(io.StringIO(text))
    out: set[str] = set()
    for row in rows:
        if row and row[0] and row[0] != "Metric name" and not row[0].startswith("=="):
            out.add(row[0].strip())
    return out


def base_name(metric: str) -> str:
    """``sm__throughput.avg.pct_of_peak_sustained_elapsed`` -> ``sm__throughput``."""
    return metric.split(".", 1)[0]


def range_name(stage: str) -> str:
    """The NVTX range a stage's profiled launches run in."""
    return RANGE_PREFIX + stage


# ----------------------------------------------------------------------------- console log


@dataclass
class NcuLog:
    passes: list[tuple[str, int]] = field(default_factory=list)  # (kernel, replay passes) per profiled launch
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


_PASSES_RE = re.compile(r'==PROF== Profiling "(?P<k>[^"]+)".*?- (?P<n>\d+) passes?')


def parse_log(text: str) -> NcuLog:
    log = NcuLog()
    for line in text.splitlines():
        m = _PASSES_RE.search(line)
        if m:
            log.passes.append((m.group("k"), int(m.group("n"))))
        elif line.startswith("==ERROR=="):
            log.errors.append(line[len("==ERROR==") :].strip())
        elif line.startswith("==WARNING=="):
            log.warnings.append(line[len("==WARNING==") :].strip())
    return log


def log_failure(log: NcuLog, text: str, report_exists: bool) -> NcuError | None:
    """Turn what ncu printed into an actionable error, or None when the run is usable."""
    joined = "\n".join(log.errors + log.warnings) + "\n" + text[-4000:]
    if "ERR_NVGPUCTRPERM" in joined:
        return NcuError(
            "counters_not_permitted",
            "Nsight Compute cannot read the GPU performance counters (ERR_NVGPUCTRPERM): run the "
            "server as root, or allow profiling for all users (load the nvidia driver with "
            "NVreg_RestrictProfilingToAdminUsers=0, see "
            "https://developer.nvidia.com/ERR_NVGPUCTRPERM). mode='event' works without counters.",
        )
    if re.search(r"clock control|--clock-control", joined, re.I) and log.errors:
        return NcuError(
            "clock_control",
            "Nsight Compute could not lock the GPU clocks (common under MIG or in some containers): "
            f"{'; '.join(log.errors)[:400]}. Retry with clock_control='none' (results then depend on "
            "boost and thermals; the report says so).",
        )
    if any("No kernels were profiled" in w for w in log.warnings) or (not log.passes and not report_exists):
        return NcuError(
            "nothing_profiled",
            "Nsight Compute profiled no kernel inside the stages' NVTX ranges. Does every stage "
            "launch a GPU kernel? ncu said: " + ("; ".join(log.errors + log.warnings)[:600] or "(nothing)"),
        )
    if log.errors and not report_exists:
        return NcuError("ncu_failed", "Nsight Compute failed: " + "; ".join(log.errors)[:800])
    return None


# ----------------------------------------------------------------------------- reports


@dataclass
class KernelRecord:
    """One profiled kernel launch, as read from a report."""

    name: str
    nvtx_ranges: list[str]
    metrics: dict[str, float | None]  # logical name -> value (None: not in the report)
    metric_source: dict[str, str]  # logical name -> the metric name that gave it
    rules: list[dict[str, Any]] = field(default_factory=list)
    sections: list[dict[str, Any]] | None = None  # None: this module version cannot list sections
    source: dict[str, Any] | None = None  # per-PC SASS rows and source files (ncu mode)
    # NVTX start/end ranges open at the launch (any thread's), by name; sorted, so no nesting order.
    nvtx_start_end: list[str] = field(default_factory=list)

    @property
    def stage(self) -> str | None:
        for r in reversed(self.nvtx_ranges):
            if r.startswith(RANGE_PREFIX):
                return r[len(RANGE_PREFIX) :]
        return None


def logical_metrics(lookup, chosen: dict[str, str] | None) -> tuple[dict[str, float | None], dict[str, str]]:
    """Each logical metric's value: the name chosen for this ncu first, then every candidate
    (a report may come from another version). Returns values (None: absent) and the names used."""
    vals: dict[str, float | None] = {}
    src: dict[str, str] = {}
    for logical, candidates in METRICS.items():
        vals[logical] = None
        for name in ([chosen[logical]] if chosen and logical in chosen else []) + list(candidates):
            v = lookup(name)
            if v is not None:
                vals[logical], src[logical] = v, name
                break
    return vals, src


def _scalar(m) -> float | None:
    """A metric's value as a float: the aggregate value, or instance 0 for launch metrics.
    Module versions differ in which of the two they fill, so both are tried."""
    if m is None:
        return None
    try:
        instanced = m.num_instances() > 0
    except Exception:  # noqa: BLE001
        instanced = False
    getters = [lambda: m.value()]
    if instanced:
        getters.insert(0 if _metric_type(m) != 1 else 1, lambda: m.value(0))
    for get in getters:
        try:
            v = get()
            if v is None:
                continue
            return float(v)
        except Exception:  # noqa: BLE001 — a value of an unexpected kind reads as missing, not 0
            continue
    return None


def _metric_type(m) -> int:
    try:
        return int(m.metric_type())
    except Exception:  # noqa: BLE001
        return -1


def _nvtx_ranges(action, kind: str = "push_pop") -> list[str]:
    """The launch's NVTX ranges of one kind: ``push_pop`` (the launching thread's stack, outermost
    first) or ``start_end`` (open on any thread; sorted by name)."""
    out: list[str] = []
    try:
        state = action.nvtx_state()
        for dom_id in state.domains():
            dom = state.domain_by_id(dom_id)
            out += list(dom.push_pop_ranges() if kind == "push_pop" else dom.start_end_ranges())
    except Exception:  # noqa: BLE001 — reports recorded without --nvtx have no state
        pass
    return out


def _rules(action) -> list[dict[str, Any]]:
    try:
        raw = action.rule_results_as_dicts()
    except Exception:  # noqa: BLE001 — older modules lack the dict view
        return []
    out = []
    for r in raw:
        msg = r.get("rule_message") or {}
        sp = r.get("speedup_estimation") or {}
        out.append(
            {
                "rule": r.get("rule_identifier"),
                "name": r.get("name"),
                "section": r.get("section_identifier"),
                "type": MSG_TYPES.get(int(msg.get("type", 0)), str(msg.get("type"))),
                "title": msg.get("title") or "",
                "message": _clean_rule_text(msg.get("message") or ""),
                "speedup_type": SPEEDUP_TYPES.get(int(sp["type"]), str(sp["type"])) if sp else None,
                "speedup_pct": float(sp["speedup"]) if sp else None,
                "focus_metrics": [
                    {"name": f.get("name"), "value": f.get("value"), "info": f.get("info")}
                    for f in r.get("focus_metrics") or []
                ],
            }
        )
    return out


def _clean_rule_text(text: str) -> str:
    # "@section:MemoryWorkloadAnalysis:Memory Workload Analysis@" -> "Memory Workload Analysis"
    return re.sub(r"@[a-z]+:[^:@]*:([^@]*)@", r"\1", text).strip()


def _sections(action) -> list[dict[str, Any]] | None:
    if not hasattr(action, "sections"):
        return None
    out = []
    try:
        for s in action.sections():
            metrics = []
            for group in (s.header_metrics(), s.body_metrics()):
                for m in group or ():
                    metrics.append({"name": m.name(), "value": _metric_text(m), "unit": _unit(m)})
            out.append({"id": s.identifier(), "name": s.name(), "metrics": metrics})
    except Exception:  # noqa: BLE001 — fall back to the CSV view
        return None
    return out


def _unit(m) -> str:
    try:
        return m.unit() or ""
    except Exception:  # noqa: BLE001
        return ""


def _metric_text(m) -> str:
    try:
        if m.num_instances() > 0 and _metric_type(m) != 1:
            if m.num_instances() == 1:
                v = m.value(0)
            else:
                return f"[{m.num_instances()} instances]"
        else:
            v = m.value()
    except Exception:  # noqa: BLE001
        return "n/a"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _source_view(action) -> dict[str, Any] | None:
    """Per-PC SASS with executed instructions, warp-state samples and stall reasons, each PC
    mapped to its source file and line (Triton emits line info; ``--import-source yes`` embeds
    the files)."""
    names = set(action.metric_names())
    count_name = "smsp__pcsamp_sample_count" if "smsp__pcsamp_sample_count" in names else None
    if count_name is None and "inst_executed" not in names:
        return None
    rows: dict[int, dict[str, Any]] = {}

    def add(metric: str, column: str) -> None:
        m = action.metric_by_name(metric)
        if m is None or m.num_instances() == 0:
            return
        ids = m.correlation_ids()
        for i in range(m.num_instances()):
            pc = int(ids.value(i))
            rows.setdefault(pc, {"pc": pc})[column] = float(m.value(i))

    add("inst_executed", "inst_executed")
    if count_name:
        add(count_name, "samples")
    stall_cols = []
    for n in sorted(names):
        if n.startswith(STALL_PREFIX) and not n.endswith("_not_issued"):
            col = "stall_" + n[len(STALL_PREFIX) :]
            stall_cols.append(col)
            add(n, col)
    if not rows:
        return None
    base = min(rows)
    for pc, row in rows.items():
        row["offset"] = pc - base
        try:
            row["sass"] = (action.sass_by_pc(pc) or "").strip()
        except Exception:  # noqa: BLE001
            row["sass"] = ""
        info = None
        try:
            info = action.source_info(pc)
        except Exception:  # noqa: BLE001
            pass
        row["file"] = info.file_name() if info is not None else None
        row["line"] = int(info.line()) if info is not None else None
    files: dict[str, str] = {}
    try:
        sf = action.source_files()
        for k in list(sf.keys()):
            files[str(k)] = str(sf[k])
    except Exception:  # noqa: BLE001 — the source was not imported (--import-source no)
        pass
    return {"rows": [rows[pc] for pc in sorted(rows)], "stall_columns": stall_cols, "files": files}


def read_report(
    mod, path: Path, chosen: dict[str, str] | None = None, want_source: bool = False
) -> list[KernelRecord]:
    """Every profiled launch of a report, read with the ``ncu_report`` module ``mod``: its
    logical metrics, rules and (optionally) the source view."""
    try:
        ctx = mod.load_report(str(path))
    except Exception as e:  # noqa: BLE001 — corrupt or truncated files
        raise NcuError("corrupt_report", f"cannot read Nsight Compute report {path}: {e}") from None
    out: list[KernelRecord] = []
    for ri in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(ri)
        for ai in range(rng.num_actions()):
            a = rng.action_by_idx(ai)
            vals, src = logical_metrics(lambda name: _scalar(a.metric_by_name(name)), chosen)
            out.append(
                KernelRecord(
                    name=a.name(),
                    nvtx_ranges=_nvtx_ranges(a),
                    nvtx_start_end=_nvtx_ranges(a, "start_end"),
                    metrics=vals,
                    metric_source=src,
                    rules=_rules(a),
                    sections=_sections(a),
                    source=_source_view(a) if want_source else None,
                )
            )
    if not out:
        raise NcuError(
            "corrupt_report",
            f"cannot read Nsight Compute report {path}: it holds no profiled kernel "
            "(empty, truncated or not a .ncu-rep file)",
        )
    return out


# ----------------------------------------------------------------------------- CSV details page


def _num(text: str) -> float | None:
    t = (text or "").strip().replace(",", "")
    if not t or t.lower() in ("n/a", "(!) n/a"):
        return None
    try:
        return float(t)
    except ValueError:
        return None


def parse_details_csv(text: str) -> list[dict[str, Any]]:
    """Group the rows of an ``ncu --csv`` details page by profiled launch (column ``ID``)."""
    lines = [ln for ln in text.splitlines() if not ln.startswith("==")]
    launches: dict[str, dict[str, Any]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        lid = (row.get("ID") or "").strip()
        if not lid.isdigit() or not row.get("Kernel Name"):
            continue  # free-text tables (e.g. NVLink topology) that follow the launches
        ranges = re.findall(
            r":(" + re.escape(RANGE_PREFIX) + r"[A-Za-z0-9_]+):",
            next((v for c, v in row.items() if c and "Push/Pop_Range" in c), "") or "",
        )
        k = launches.setdefault(
            lid,
            {
                "id": lid,
                "kernel": row.get("Kernel Name", ""),
                "sections": {},
                "rules": [],
                "metrics": {},
                "nvtx_ranges": ranges,
            },
        )
        sec = row.get("Section Name", "")
        name = row.get("Metric Name") or ""
        if name:
            k["sections"].setdefault(sec, []).append(
                {"name": name, "value": row.get("Metric Value", ""), "unit": row.get("Metric Unit", "")}
            )
            k["metrics"][name] = _num(row.get("Metric Value", ""))
        if row.get("Rule Name"):
            sp = _num(row.get("Estimated Speedup", ""))
            k["rules"].append(
                {
                    "rule": row["Rule Name"],
                    "name": row["Rule Name"],
                    "section": sec,
                    "type": {"OPT": "OPTIMIZATION", "WRN": "WARNING", "INF": "NONE", "ERR": "ERROR"}.get(
                        row.get("Rule Type", ""), row.get("Rule Type", "")
                    ),
                    "title": "",
                    "message": _clean_rule_text(row.get("Rule Description", "")),
                    "speedup_type": (row.get("Estimated Speedup Type") or "").lower() or None,
                    "speedup_pct": sp,
                    "focus_metrics": [],
                }
            )
    return list(launches.values())


def records_from_details(launches: list[dict[str, Any]], chosen: dict[str, str] | None) -> list[KernelRecord]:
    out = []
    for k in launches:
        vals, src = logical_metrics(k["metrics"].get, chosen)
        sections = [{"id": s, "name": s, "metrics": ms} for s, ms in k["sections"].items()]
        out.append(
            KernelRecord(
                name=k["kernel"],
                nvtx_ranges=k.get("nvtx_ranges", []),
                metrics=vals,
                metric_source=src,
                rules=k["rules"],
                sections=sections,
            )
        )
    return out
