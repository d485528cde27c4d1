"""Markdown primitives shared by every renderer: ``n/a`` for what was not measured (never
0), number formatting and tables. Only the renderers format markdown."""

from __future__ import annotations

from typing import Any

NA = "n/a"
# What a CPU time is, wherever one is shown: what ran (the Triton interpreter or torch on the CPU)
# is not recorded in the result, so the label names only the clock.
CPU_WALL_TIME = "CPU wall time, no GPU"


def num(v: float | None, digits: int = 1) -> str:
    return NA if v is None else f"{v:.{digits}f}"


def table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def us(v_ns: float | None, digits: int = 2) -> str:
    """ns as µs."""
    return NA if v_ns is None else f"{v_ns / 1e3:.{digits}f}"


def mb(v_bytes: float | None) -> str:
    """bytes as MB (10^6)."""
    return NA if v_bytes is None else f"{v_bytes / 1e6:.2f}"
