"""What the Nsight Compute readers return: :class:`KernelRecord` (one profiled launch),
:class:`NcuError`, and the logical metrics of a launch from whatever metric names it carries."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .ncu_metrics import METRICS, RANGE_PREFIX


class NcuError(RuntimeError):
    """Nsight Compute is missing, not permitted, or its run failed; the message says what to do."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


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


def _clean_rule_text(text: str) -> str:
    # "@section:MemoryWorkloadAnalysis:Memory Workload Analysis@" -> "Memory Workload Analysis"
    return re.sub(r"@[a-z]+:[^:@]*:([^@]*)@", r"\1", text).strip()
