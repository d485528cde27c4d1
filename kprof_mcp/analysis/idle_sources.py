"""The Python line behind each cause of the GPU's idle time (issue 36 item 5): where a recording
carries each CUDA call's Python line (Nsight Systems with Python backtraces,
:mod:`kprof_mcp.parsers.nsys_backtrace`: the trace's API calls have ``source`` and ``op``), every
idle instant :mod:`kprof_mcp.analysis.idle` gives to a host state is credited to the call that
owns it, and each cause names the line whose calls own most of its idle time:

* **first_call**, **copy_h2d**, **launch**, **other_api**: the calls of that kind during the
  idle instants (the ``cudaMalloc``, the pageable ``cudaMemcpy``, the launches of the storm); a
  launch's short stretch of Python between calls (< ``HOST_WORK_MIN_NS``) is the next call's;
* **sync**: the synchronising call (``.item()``'s copy and stream sync, ``torch.cuda.synchronize``)
  in which the idle gap began: the whole rest of the gap is its (a sync call inside a gap begun
  elsewhere: the part it overlaps);
* **host**: the host's own work is Python between two CUDA calls, which a CUDA backtrace does not
  see: the line of the call that ended the stretch (where the host came back to the GPU) is named,
  with the line of the call before it (``after``).

Each cause's entry: ``line`` (``file:line (function)``), ``op`` (the ops of that line's calls, most
frequent first), ``calls`` (that line's calls of the cause in the window: syncs that drained the
GPU, host stretches), ``idle_ns`` (the idle time they own) and ``share`` (of the cause's idle time
with a known line). Pure: numbers in, a dict out.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# Idle's call categories -> its parts (idle.PARTS) for the causes owned by a call's interval.
INTERVAL_PARTS = {
    "first_call": "first_call",
    "copy_h2d": "copy_h2d",
    "launch": "launch",
    "other": "other_api",
}
# The diagnosis' cause names (analysis.diagnosis.idle_opportunities) -> idle's parts.
CAUSE_PART = {
    "sync": "sync",
    "host": "host",
    "launch": "launch",
    "first_call": "first_call",
    "copy": "copy_h2d",
    "cuda_api": "other_api",
}


@dataclass(frozen=True)
class Call:
    start: float
    end: float
    cat: str  # idle's category: first_call, copy_h2d, sync, launch, other
    source: str | None
    op: str | None


@dataclass
class Owned:
    """The idle instants idle.breakdown gave to each host state, as it gave them."""

    intervals: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # part -> pieces
    sync_gaps: list[tuple[float, float]] = field(default_factory=list)  # (gap start, idle ns after the sync)
    short: list[tuple[float, float]] = field(default_factory=list)  # short host stretches (launch part)
    host: list[tuple[float, float]] = field(default_factory=list)  # host-work pieces

    def add(self, part: str, pieces: list[tuple[float, float]]) -> None:
        if pieces:
            self.intervals.setdefault(part, []).extend(pieces)


def _overlap(iv: list[tuple[float, float]], starts: list[float], lo: float, hi: float) -> float:
    """The length of [lo, hi] inside the sorted, disjoint intervals ``iv``."""
    i, ns = max(0, bisect.bisect_right(starts, lo) - 1), 0.0
    while i < len(iv) and iv[i][0] < hi:
        s, e = iv[i]
        if e > lo:
            ns += min(e, hi) - max(s, lo)
        i += 1
    return ns


class _Acc:
    def __init__(self) -> None:
        self.by: dict[str, dict[str, Any]] = {}

    def credit(self, call: Call, ns: float, count: bool = True, after: str | None = None) -> None:
        if call.source is None:
            return
        d = self.by.setdefault(
            call.source, {"idle_ns": 0.0, "calls": 0, "ops": Counter(), "after": Counter()}
        )
        d["idle_ns"] += ns
        if count:
            d["calls"] += 1
            if call.op:
                d["ops"][call.op] += 1
        if after:
            d["after"][after] += 1

    def best(self) -> dict[str, Any] | None:
        total = sum(d["idle_ns"] for d in self.by.values())
        if total <= 0:
            return None
        line, d = max(self.by.items(), key=lambda kv: (kv[1]["idle_ns"], kv[1]["calls"], kv[0]))
        out = {
            "line": line,
            "op": ", ".join(op for op, _ in d["ops"].most_common(3)) or None,
            "calls": d["calls"],
            "idle_ns": d["idle_ns"],
            "share": d["idle_ns"] / total,
            "lines": len(self.by),
        }
        if d["after"]:
            out["after"] = d["after"].most_common(1)[0][0]
        return out


Sample = tuple[float, "str | None", "str | None"]  # (instant ns, user line, library function)


def sampled_host(samples: list[Sample], pieces: list[tuple[float, float]]) -> dict[str, Any] | None:
    """The host part's line from the host's sampled Python stacks (parsers/nsys_pysamples.py): the
    samples taken inside the host-work pieces, counted by their user line; the line with the most owns
    that share of the pieces' time (each sample stands for one sampling interval). None without a
    sample in a piece with a user line."""
    if not samples or not pieces:
        return None
    at = [t for t, _, _ in samples]
    lines: Counter = Counter()
    ops: dict[str, Counter] = {}
    n = 0
    for s, e in sorted(pieces):
        i = bisect.bisect_left(at, s)
        while i < len(samples) and samples[i][0] <= e:
            _, src, op = samples[i]
            n += 1
            if isinstance(src, str):
                lines[src] += 1
                if isinstance(op, str):
                    ops.setdefault(src, Counter())[op] += 1
            i += 1
    if not lines:
        return None
    line, k = max(lines.items(), key=lambda kv: (kv[1], kv[0]))
    total = sum(e - s for s, e in pieces)
    return {
        "line": line,
        "op": ", ".join(op for op, _ in ops.get(line, Counter()).most_common(2)) or None,
        "calls": k,
        "samples": n,
        "idle_ns": total * k / n,
        "share": k / n,
        "lines": len(lines),
        "by": "samples",
    }


def attribute(
    calls: list[Call],
    owned: Owned,
    lo: float,
    hi: float,
    sync_slack: float,
    samples: list[Sample] | None = None,
) -> dict[str, Any]:
    """Each idle part (idle.PARTS) -> the line whose calls own most of its idle time (see the
    module docstring); only parts with idle time a line owns. Empty when no call has a line.
    ``samples`` (the calling threads' sampled Python stacks, in time order): the host part's line is
    the one the host was sampled running most inside its host-work pieces (:func:`sampled_host`)
    rather than the calls around them."""
    if not any(c.source for c in calls):
        return {}
    calls = sorted(calls, key=lambda c: c.start)
    lined = [c for c in calls if c.source is not None]  # the calls the stretches are credited to
    lined_starts = [c.start for c in lined]
    acc = {part: _Acc() for part in ("first_call", "copy_h2d", "sync", "launch", "other_api", "host")}
    # A sync's idle time is mostly the rest of a gap begun in it (below); a gap begun elsewhere can
    # still overlap a sync call (counted with the gaps, not as a call).
    for cat, part in (*INTERVAL_PARTS.items(), ("sync", "sync")):
        iv = sorted(owned.intervals.get(part, []))
        ivs = [s for s, _ in iv]
        for c in calls:
            if c.cat == cat and lo <= c.start <= hi:
                acc[part].credit(c, _overlap(iv, ivs, c.start, c.end) if iv else 0.0, count=cat != "sync")

    def next_call(t: float) -> Call | None:  # the first call with a line from t on
        i = bisect.bisect_left(lined_starts, t)
        return lined[i] if i < len(lined) else None

    def prev_call(t: float) -> Call | None:  # the last call with a line that ended by t
        i = bisect.bisect_right(lined_starts, t) - 1
        while i >= 0 and lined[i].end > t:
            i -= 1
        return lined[i] if i >= 0 else None

    for s, e in owned.short:
        c = next_call(e)
        if c is not None:
            acc["launch"].credit(c, e - s, count=False)
    syncs = [c for c in calls if c.cat == "sync"]
    sync_starts = [c.start for c in syncs]
    for a, ns in owned.sync_gaps:  # the latest sync begun by the gap's start that had not returned
        i = bisect.bisect_right(sync_starts, a) - 1
        while i >= 0 and syncs[i].end + sync_slack < a and a - syncs[i].start < 1e9:
            i -= 1
        if i >= 0 and syncs[i].end + sync_slack >= a:
            acc["sync"].credit(syncs[i], ns)
    for s, e in owned.host:
        c, before = next_call(e), prev_call(s)
        if c is not None:
            acc["host"].credit(c, e - s, after=before.source if before is not None else None)
    out = {}
    for part, a in acc.items():
        best = a.best()
        if best is not None:
            out[part] = best
    by_samples = sampled_host(
        samples or [], [(max(s, lo), min(e, hi)) for s, e in owned.host if e > lo and s < hi]
    )
    if by_samples is not None:
        out["host"] = by_samples
    return out


def source_of(idle: dict, cause: str) -> dict[str, Any] | None:
    """The line behind one of the diagnosis' idle causes (``sync``, ``host``, ``launch``,
    ``first_call``, ``copy``, ``cuda_api``) in an idle breakdown's dict, or None."""
    return (idle.get("sources") or {}).get(CAUSE_PART.get(cause, cause))
