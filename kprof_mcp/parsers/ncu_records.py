"""What the Nsight Compute readers return: :class:`KernelRecord` (one profiled launch) with its
rule results (:class:`NcuRule`), sections (:class:`NcuSection`) and source view
(:class:`SourceView`), the CSV page's launches (:class:`DetailsLaunch`), :class:`NcuError`, and the
logical metrics of a launch from whatever metric names it carries.

A rule result stays a dict (a ``TypedDict``): it is stored as is in ``StageResult.ncu_rules`` and
``ncu/rules.json``. Sections and the source view are dataclasses; :meth:`NcuSection.to_dict` gives
the JSON of ``ncu/sections.json``."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

from .ncu_metrics import METRICS, RANGE_PREFIX


class NcuError(RuntimeError):
    """Nsight Compute is missing, not permitted, or its run failed; the message says what to do."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class FocusMetric(TypedDict):
    """A metric a rule's finding rests on, as the report states it."""

    name: str | None
    value: Any
    info: Any


class NcuRule(TypedDict):
    """One rule result of a launch (``ncu_report``'s dict view, or a row of the CSV page)."""

    rule: str | None
    name: str | None
    section: str | None
    type: str
    title: str
    message: str
    speedup_type: str | None
    speedup_pct: float | None
    focus_metrics: list[FocusMetric]


@dataclass(frozen=True)
class SectionMetric:
    """One metric of a section as Nsight Compute prints it (value as text, in its unit)."""

    name: str
    value: str | None
    unit: str | None


@dataclass(frozen=True)
class NcuSection:
    """One section of a launch (``SpeedOfLight``, ``Occupancy``, ...) and its metrics."""

    id: str
    name: str
    metrics: list[SectionMetric]

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "name", "metrics": [{"name", "value", "unit"}]}``, as ``ncu/sections.json`` holds it."""
        return asdict(self)


@dataclass(frozen=True)
class SourceView:
    """The per-PC SASS of a launch (``ncu`` mode): one row per PC (``pc``, ``offset``, ``sass``,
    ``file``, ``line``, ``inst_executed``, ``samples`` and a ``stall_<reason>`` column per reason
    in ``stall_columns``), and the imported source files by name."""

    rows: list[dict[str, float | int | str | None]]
    stall_columns: list[str]
    files: dict[str, str]


@dataclass(frozen=True)
class DetailsLaunch:
    """One profiled launch of the ``ncu --csv`` details page: its metrics by section, rule
    results, every metric's value by name, and the push/pop ranges kprof opened around it."""

    id: str
    kernel: str
    sections: dict[str, list[SectionMetric]]
    rules: list[NcuRule]
    metrics: dict[str, float | None]
    nvtx_ranges: list[str]

    def section_list(self) -> list[NcuSection]:
        """The sections, each named by its identifier (the page has no display names)."""
        return [NcuSection(id=s, name=s, metrics=ms) for s, ms in self.sections.items()]


@dataclass
class KernelRecord:
    """One profiled kernel launch, as read from a report."""

    name: str
    nvtx_ranges: list[str]
    metrics: dict[str, float | None]  # logical name -> value (None: not in the report)
    metric_source: dict[str, str]  # logical name -> the metric name that gave it
    rules: list[NcuRule] = field(default_factory=list)
    sections: list[NcuSection] | None = None  # None: this module version cannot list sections
    source: SourceView | None = None  # per-PC SASS rows and source files (ncu mode)
    # NVTX start/end ranges open at the launch (any thread's), by name; sorted, so no nesting order.
    nvtx_start_end: list[str] = field(default_factory=list)
    # The CUDA stream the kernel ran on (launch__stream_id: the driver's unique stream id, cuStreamGetId's).
    stream_id: int | None = None

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
