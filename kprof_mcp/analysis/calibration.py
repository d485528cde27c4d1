"""Calibrated peaks beside the machine table (issue 36, item 1): what ``kprof device --calibrate``
measured (:mod:`kprof_mcp.child.calibrate`) set against the table's documented rates
(``kprof_mcp/machines.json``), and the rates the model uses: the measured one where there is one,
the table's otherwise.

The table gives each execution pipe's throughput in ops per clock per SM and each memory level's
in bytes per clock (per SM for shared/L1, for the chip for L2) or bytes per second (DRAM: the
device's ``peak_gbps``). A measurement in the same unit divides by it directly: measured ÷ table
below 1 is the part of the documented peak a real kernel reaches (on an H100 at a locked
1305 MHz: cuBLAS at 90–96 % of the tensor rate per clock, FFMA chains at 98 %, a copy at 90 % of
DRAM's datasheet bandwidth: docs/machine-model.md); above 1 means the table
is wrong for this device, or the benchmark counted work it did not do.

Pure: dicts in, rows out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

LEVELS = ("pipes", "memory", "scheduler")


class CalibrationError(ValueError):
    """A calibration document that is not one."""


@dataclass(frozen=True)
class Row:
    """One pipe or memory level: the table's rate, the measured one, their ratio."""

    name: str
    level: str  # "pipes" or "memory"
    unit: str
    table: float | None
    measured: float | None
    skipped: str | None = None  # why there is no measurement

    @property
    def ratio(self) -> float | None:
        if self.table and self.measured is not None:
            return self.measured / self.table
        return None

    @property
    def used(self) -> float | None:
        """The rate the model uses: measured where there is one, else the table's."""
        return self.measured if self.measured is not None else self.table


def parse(doc: Any) -> dict[str, Any]:
    """A calibration document, checked: ``device``, ``arch``, ``sm_count``, ``measured`` with each
    entry either ``{"rate": finite > 0, "unit": ...}`` or ``{"skipped": reason}``."""
    if not isinstance(doc, dict):
        raise CalibrationError("a calibration is a JSON object")
    for key in ("device", "arch", "sm_count", "measured"):
        if key not in doc:
            raise CalibrationError(f"a calibration has no {key!r}")
    if not isinstance(doc["measured"], dict) or not doc["measured"]:
        raise CalibrationError("'measured' must be a non-empty object")
    for name, m in doc["measured"].items():
        if not isinstance(m, dict):
            raise CalibrationError(f"measured[{name!r}] must be an object")
        if "skipped" in m:
            continue
        r = m.get("rate")
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r) or r <= 0:
            raise CalibrationError(f"measured[{name!r}].rate={r!r} must be a finite number > 0")
    return doc


def table_rates(
    arch_table: dict[str, Any] | None, peak_gbps: float | None = None
) -> dict[str, tuple[str, float | None, str]]:
    """The machine table's rates for one architecture (``machines.json``'s ``archs[arch]``):
    name → (level, rate, unit). DRAM's rate, null in the table, is the device's ``peak_gbps``."""
    out: dict[str, tuple[str, float | None, str]] = {}
    for level in LEVELS:
        for name, e in ((arch_table or {}).get(level) or {}).items():
            rate = e.get("rate") if isinstance(e, dict) else None
            unit = str(e.get("unit", "")) if isinstance(e, dict) else ""
            if name == "dram":
                rate, unit = (peak_gbps * 1e9 if peak_gbps else None), "bytes/s"
            out[name] = (level, float(rate) if rate is not None else None, unit)
    return out


def compare(
    doc: dict[str, Any], arch_table: dict[str, Any] | None, peak_gbps: float | None = None
) -> list[Row]:
    """The table's rows (pipes, then memory levels) with the measurement beside each, then the
    measurements the table has no row for. ``arch_table`` None: measured rows only."""
    table = table_rates(arch_table, peak_gbps)
    measured = doc["measured"]
    rows = []
    for name, (level, rate, unit) in table.items():
        m = measured.get(name) or {}
        rows.append(
            Row(
                name,
                level,
                unit,
                rate,
                float(m["rate"]) if "rate" in m and "skipped" not in m else None,
                m.get("skipped"),
            )
        )
    for name, m in measured.items():
        if name not in table:
            level = "memory" if name in ("dram", "dram_sector", "l2", "l1", "shared") else "pipes"
            rate = None if "skipped" in m else float(m["rate"])
            rows.append(Row(name, level, str(m.get("unit", "")), None, rate, m.get("skipped")))
    return rows
