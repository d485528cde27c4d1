"""``kprof device --calibrate`` in words: each pipe's and memory level's table rate, measured rate
and their ratio (:func:`kprof_mcp.analysis.calibration.compare`)."""

from __future__ import annotations

from typing import Any

from ..analysis.calibration import Row


def _rate(v: float | None, unit: str) -> str:
    if v is None:
        return "—"
    if unit == "bytes/s":
        return f"{v / 1e9:,.0f} GB/s"
    return f"{v:,.1f}" if v < 100 else f"{v:,.0f}"


def calibration_markdown(doc: dict[str, Any], rows: list[Row], table_note: str | None = None) -> str:
    """A header (device, clock, versions) and one row per resource."""
    v = doc.get("versions") or {}
    lines = [
        f"# Calibrated peaks: {doc.get('device')} ({doc.get('arch')}, {doc.get('sm_count')} SMs)",
        "",
        f"SM clock during the run: {doc.get('sm_clock_mhz')} MHz ({doc.get('clock_source', 'clock source unknown')}); "
        f"{doc.get('date')}; torch {v.get('torch')}, Triton {v.get('triton')}, CUDA {v.get('cuda')}, driver {v.get('driver')}.",
        "Pipes: ops per clock per SM; shared/L1: bytes per clock per SM; L2: bytes per clock (chip); DRAM: bytes per second; "
        "blocks: thread blocks dispatched per SM clock (chip).",
    ]
    if doc.get("clock_note"):
        lines.append(str(doc["clock_note"]))
    if table_note:
        lines.append(table_note)
    lines += ["", "| pipe / level | unit | table | measured | measured ÷ table |", "|---|---|---:|---:|---:|"]
    for r in rows:
        ratio = f"{r.ratio:.2f}" if r.ratio is not None else "—"
        measured = (
            _rate(r.measured, r.unit)
            if r.measured is not None
            else f"skipped: {r.skipped}"
            if r.skipped
            else "—"
        )
        lines.append(f"| {r.name} | {r.unit} | {_rate(r.table, r.unit)} | {measured} | {ratio} |")
    return "\n".join(lines)
