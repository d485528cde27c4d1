"""Reading what Nsight Compute writes: its console log, the ``--query-metrics`` catalog, the
``.ncu-rep`` report (through NVIDIA's ``ncu_report`` module, passed in by the caller) and the
``ncu --import --csv`` details page.

Pure: every function takes text or an already loaded module and returns records; nothing
here runs ncu or looks for an installation (that is :mod:`kprof_mcp.tools.ncu`). Tested on
reports recorded on an H100 (``tests/fixtures/h100_ncu``).

The readers live beside this module, which re-exports them: :mod:`.ncu_metrics` (metric names),
:mod:`.ncu_records` (the records), :mod:`.ncu_rep` (reports) and :mod:`.ncu_csv` (the CSV page);
the console log is read here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .ncu_csv import parse_details_csv, records_from_details
from .ncu_metrics import (
    _NON_COUNTER_PREFIXES,
    ACCOUNTING,
    ACCOUNTING_COUNTS,
    ANNOTATION_SECTIONS,
    METRICS,
    RANGE_PREFIX,
    STALL_REASONS,
    base_name,
    parse_metric_catalog,
    range_name,
)
from .ncu_records import (
    DetailsLaunch,
    FocusMetric,
    KernelRecord,
    NcuError,
    NcuRule,
    NcuSection,
    SectionMetric,
    SourceView,
    logical_metrics,
)
from .ncu_rep import MSG_TYPES, SPEEDUP_TYPES, STALL_PREFIX, read_report

__all__ = [
    "ACCOUNTING",
    "ACCOUNTING_COUNTS",
    "ANNOTATION_SECTIONS",
    "COUNTERS_HINT",
    "METRICS",
    "MSG_TYPES",
    "RANGE_PREFIX",
    "SPEEDUP_TYPES",
    "STALL_PREFIX",
    "STALL_REASONS",
    "_NON_COUNTER_PREFIXES",
    "DetailsLaunch",
    "FocusMetric",
    "KernelRecord",
    "NcuError",
    "NcuLog",
    "NcuRule",
    "NcuSection",
    "SectionMetric",
    "SourceView",
    "base_name",
    "log_failure",
    "logical_metrics",
    "parse_details_csv",
    "parse_log",
    "parse_metric_catalog",
    "range_name",
    "read_report",
    "records_from_details",
]


# ----------------------------------------------------------------------------- console log


@dataclass
class NcuLog:
    passes: list[tuple[str, int]] = field(default_factory=list)  # (kernel, replay passes) per profiled launch
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# How to let Nsight Compute read the counters (ERR_NVGPUCTRPERM), as the error and the
# annotation fallback's warning say it.
COUNTERS_HINT = (
    "run the server as root, or allow profiling for all users (load the nvidia driver with "
    "NVreg_RestrictProfilingToAdminUsers=0, see https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
)

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
            f"Nsight Compute cannot read the GPU performance counters (ERR_NVGPUCTRPERM): {COUNTERS_HINT}. "
            "mode='event' works without counters.",
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
