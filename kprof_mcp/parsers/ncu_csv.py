"""The ``ncu --import --csv --page details`` page: rows grouped by profiled launch, and kernel
records from them (the fallback when ``ncu_report`` cannot be imported). Pure."""

from __future__ import annotations

import csv
import io
import re

from .ncu_metrics import RANGE_PREFIX
from .ncu_records import (
    DetailsLaunch,
    KernelRecord,
    NcuRule,
    SectionMetric,
    _clean_rule_text,
    logical_metrics,
)


def _num(text: str) -> float | None:
    t = (text or "").strip().replace(",", "")
    if not t or t.lower() in ("n/a", "(!) n/a"):
        return None
    try:
        return float(t)
    except ValueError:
        return None


def parse_details_csv(text: str) -> list[DetailsLaunch]:
    """Group the rows of an ``ncu --csv`` details page by profiled launch (column ``ID``)."""
    lines = [ln for ln in text.splitlines() if not ln.startswith("==")]
    launches: dict[str, DetailsLaunch] = {}
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
            DetailsLaunch(
                id=lid,
                kernel=row.get("Kernel Name", ""),
                sections={},
                rules=[],
                metrics={},
                nvtx_ranges=ranges,
            ),
        )
        sec = row.get("Section Name", "")
        name = row.get("Metric Name") or ""
        if name:
            k.sections.setdefault(sec, []).append(
                SectionMetric(name=name, value=row.get("Metric Value", ""), unit=row.get("Metric Unit", ""))
            )
            k.metrics[name] = _num(row.get("Metric Value", ""))
        if row.get("Rule Name"):
            sp = _num(row.get("Estimated Speedup", ""))
            k.rules.append(
                NcuRule(
                    rule=row["Rule Name"],
                    name=row["Rule Name"],
                    section=sec,
                    type={"OPT": "OPTIMIZATION", "WRN": "WARNING", "INF": "NONE", "ERR": "ERROR"}.get(
                        row.get("Rule Type", ""), row.get("Rule Type", "")
                    ),
                    title="",
                    message=_clean_rule_text(row.get("Rule Description", "")),
                    speedup_type=(row.get("Estimated Speedup Type") or "").lower() or None,
                    speedup_pct=sp,
                    focus_metrics=[],
                )
            )
    return list(launches.values())


def records_from_details(launches: list[DetailsLaunch], chosen: dict[str, str] | None) -> list[KernelRecord]:
    out = []
    for k in launches:
        vals, src = logical_metrics(k.metrics.get, chosen)
        out.append(
            KernelRecord(
                name=k.kernel,
                nvtx_ranges=k.nvtx_ranges,
                metrics=vals,
                metric_source=src,
                rules=k.rules,
                sections=k.section_list(),
            )
        )
    return out
