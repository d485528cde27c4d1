"""Where a profile's wall time goes (issue 40), measured in the server's process: ``time.perf_counter``
at each phase boundary, the profiling process's own phases (``result.phases_s``, measured in it)
slotted in where it ran, and the sum checked against the wall time from the request's submission
(the job's :class:`~kprof_mcp.runner.RunControl` is made then) to the last file written; what no
phase covers is ``unaccounted_s``. Kept in ``result.timings`` and rendered by
:mod:`kprof_mcp.render.phases`."""

from __future__ import annotations

import time
from typing import Any

# The part of the profiling process's command the process itself did not time: a fresh process's
# start (or a warm worker's hand-off, and its readiness on a first profile) and its artifacts' writing.
HANDOFF = "worker_start_handoff_and_write"


class Phases:
    """Wall-time phases of one profile in the server's process, in order."""

    def __init__(self, since: float | None = None):
        self.t0 = since if since is not None else time.perf_counter()
        self.mark = self.t0
        self.parts: dict[str, float] = {}
        self.child: dict[str, float] = {}

    def close(self, name: str, at: float | None = None) -> float:
        """Book the time since the last boundary, to now or ``at``, under ``name`` (adding up); return it."""
        now = time.perf_counter() if at is None else at
        dt = now - self.mark
        self.parts[name] = self.parts.get(name, 0.0) + dt
        self.mark = now
        return dt

    def expand(self, name: str, wall_s: float, child_phases: dict[str, float]) -> None:
        """The phase ``name`` ran the profiling process's command (``wall_s`` of it): put the process's
        own phases in its place, the rest of its wall time as :data:`HANDOFF`, and the runner's work
        around the command (request file, reading its record) as ``runner``."""
        if name not in self.parts:
            return
        total = self.parts[name]
        inside = sum(child_phases.values())
        spans = {
            "runner": max(0.0, total - wall_s),
            HANDOFF: max(0.0, min(total, wall_s) - inside),
            **child_phases,
        }
        out: dict[str, float] = {}
        for k, v in self.parts.items():
            if k != name:
                out[k] = out.get(k, 0.0) + v
                continue
            for ck, cv in spans.items():
                out[ck] = out.get(ck, 0.0) + cv
        self.parts = out
        self.child = dict(child_phases)

    def record(self) -> dict[str, Any]:
        """What ``result.timings`` keeps (besides the child's ``stopping``)."""
        wall = time.perf_counter() - self.t0
        booked = sum(self.parts.values())
        return {
            "wall_s": round(wall, 3),
            "phases": {k: round(v, 3) for k, v in self.parts.items()},
            "unaccounted_s": round(wall - booked, 3),
            "in_child": list(self.child),
        }
