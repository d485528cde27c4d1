"""report.md's per-rank idle table (issue 39): each rank's GPU idle time by host state over its kept steps
(:mod:`kprof_mcp.analysis.rank_idle`), per occurrence, in ms. Units are scaled here only."""

from __future__ import annotations

from .diagnosis.ranks import ms
from .markdown import num, table
from .timeline import _PART_SHORT

PARTS = ("first_call", "copy_h2d", "sync", "launch", "other_api", "host")


def idle_lines(ranks: list[dict]) -> list[str]:
    """One row per rank with an ``idle`` breakdown: GPU busy share of its window and each idle part per
    occurrence (ms); [] when no rank has one."""
    rows = []
    for r in ranks:
        i = r.get("idle")
        if not i or not i.get("window_ns"):
            continue
        occ = max(1, int(i.get("occurrences") or 1))
        parts = i.get("parts_ns") or {}
        rows.append(
            [
                r.get("rank"),
                ms(i["window_ns"] / occ),
                num(100.0 * i["busy_ns"] / i["window_ns"]),
                ms(i["idle_ns"] / occ),
            ]
            + [ms(parts.get(k, 0.0) / occ) for k in PARTS]
        )
    if not rows:
        return []
    head = ["Rank", "Window / occurrence (ms)", "GPU busy %", "GPU idle (ms)"] + [
        f"{_PART_SHORT[k]} (ms)" for k in PARTS
    ]
    return [
        "",
        "Each rank's GPU idle time by what its host was doing (per kept occurrence of its steps, over its own "
        "trace; a rank waiting inside a collective's kernel is busy there — its wait is in the table above):",
        "",
        *table(head, rows),
    ]
