"""Each rank's GPU idle time by host state (issue 39, item 2: "idle by host state, the existing attribution,
per rank"): :func:`kprof_mcp.analysis.idle.breakdown` on the rank's own trace, over its stages' kept
occurrences (the first kept start to the last kept end, as a single process's command is attributed), so
the straggler's own idle time says why it is late (``host``: its Python, data loading, a sleep; ``sync``,
``launch``, ...). A rank that waits inside a collective's kernel is busy there (an NCCL kernel runs while it
waits): its wait is the communication summary's, not idle time.

Used by both modes that record ranks: event mode (each rank's torch.profiler trace) and nsys mode (each
process of the report, :mod:`kprof_mcp.analysis.nsys_ranks`). Pure: traces and stages in, figures (ns) out.
"""

from __future__ import annotations

from typing import Any

from . import idle
from .command import CommandStage


def rank_idle(procs: list[Any], stages: list[CommandStage], table: list[dict[str, Any]]) -> None:
    """Add ``idle`` to each recorded rank's row of ``table`` (by pid): its window, busy and idle time,
    the idle time's parts by host state (:data:`kprof_mcp.analysis.idle.PARTS`, ns over the window) and
    the kept occurrences they span; a rank with no stage, no trace or no CUDA activity gets none."""
    rows = {r["pid"]: r for r in table}
    for p in procs:
        row = rows.get(p.pid)
        if row is None or p.trace is None or (p.trace.kernels.empty and p.trace.api.empty):
            continue
        own = set(row.get("stages") or [])
        spans = [st.span for st in stages if st.name in own and st.span]
        if not spans:
            continue
        lo, hi = min(s for s, _ in spans), max(e for _, e in spans)
        occ = max(st.occurrences for st in stages if st.name in own)
        b = idle.breakdown(p.trace, lo, hi, occ)
        row["idle"] = {
            "scope": "ranges",
            "window_ns": b.window_ns,
            "busy_ns": b.busy_ns,
            "idle_ns": b.idle_ns,
            "parts_ns": dict(b.parts_ns),
            "gaps": b.gaps,
            "occurrences": b.occurrences,
        }
