"""The host work of the statements that read the GPU's values, from the host's sampled Python stacks.

A synchronising statement costs the host more than its CUDA call: ``torch.cuda.synchronize()`` enters a
device guard before its ``cudaDeviceSynchronize`` and leaves it after; a value check builds the tensor it
reads (``if not valid.all()``). That time lies in the host gaps around the call, where the trace shows it
as the host's, and a what-if that drops only the wait leaves it on the critical path (a forward that
synchronised around each of its 96 modules: the waits dropped, +2 % in the replay; the statements dropped,
+97 % measured). Nsight Systems' periodic Python samples (parsers/nsys_pysamples.py) say which statement the
host was running in each gap: a sample at the user line of a dropped read's call, inside the library
function that made the call (``op``, the innermost on the sample's stack), is that statement's host work;
where the calls carry no Python line (no per-call backtraces: periodic samples alone, nsys mode's default),
the samples taken inside the reads name their statements.
Only that function's own frames count, not what it called: ``torch.cuda.synchronize``'s device guard, the
value check of ``distribution.__init__`` (its constraint checks, called from it, are other work of the
same statement). A read made by C++ under a broad Python function (the autograd engine's, under
``loss.backward()``) makes every sample under that function the statement's: an over-count this does not
guard against.

The estimate is the sampling one (each sample stands for an equal share of the sampled host time): of the N
samples taken in the window's host gaps, M at a dropped read's (line, function) → the statements' host time
is M/N of the gaps' total, taken out of the gaps around the calls those statements' lines made (the one
before each and the one after it: the statement's code runs around its calls, the read's and any launches
it made first) in proportion to their lengths, never more than those gaps hold. Without samples, or without
a sample at such a statement, nothing changes. Pure.
"""

from __future__ import annotations

import bisect
from typing import Any

# (the call, the sample's user line and library function, whether it fell inside the call rather than in the
# host gap before it)
Sampled = tuple[int, "str | None", "str | None", bool]


def gap_samples(py_samples: Any, calls: list, lo: float) -> list[Sampled]:
    """The host's samples (a Trace's ``py_samples``: ``start``, ``tid``, ``source``, ``op``, ``blocked``) that
    fall in a call's host gap (after the previous call of its thread ended, before it started: not those of a
    blocked thread) or inside the call (blocked or not: the stack names the statement that made it), as
    :data:`Sampled`. Samples after a thread's last call are left out."""
    if py_samples is None or getattr(py_samples, "empty", True) or not calls:
        return []
    ps = py_samples
    blocked = ps["blocked"].astype(bool).tolist() if "blocked" in ps.columns else [False] * len(ps)
    by_tid: dict[Any, list[tuple[float, Any, Any, bool]]] = {}
    rows_in = zip(ps["start"].tolist(), ps["tid"].tolist(), ps["source"].tolist(), ps["op"].tolist(), blocked)
    for t, tid, src, op, b in rows_in:
        by_tid.setdefault(tid, []).append(
            (float(t), src if isinstance(src, str) else None, op if isinstance(op, str) else None, bool(b))
        )
    out: list[Sampled] = []
    last_end: dict[Any, float] = {}
    for rows in by_tid.values():
        rows.sort(key=lambda r: r[0])
    starts = {tid: [r[0] for r in rows] for tid, rows in by_tid.items()}
    for i, c in enumerate(calls):  # in start order per thread (as built)
        rows = by_tid.get(c.tid)
        prev = last_end.get(c.tid, lo)
        last_end[c.tid] = max(prev, c.end)
        if not rows:
            continue
        at = starts[c.tid]
        k = bisect.bisect_left(at, prev)
        while k < len(rows) and rows[k][0] <= c.end:
            t, src, op, b = rows[k]
            inside = t >= c.start
            if inside or not b:
                out.append((i, src, op, inside))
            k += 1
    return out


def thread_order(calls: list) -> dict[int, int]:
    """Each call's index -> the index of the next call of its thread (calls in start order per thread)."""
    nxt: dict[int, int] = {}
    last: dict[Any, int] = {}
    for j, c in enumerate(calls):
        if c.tid in last:
            nxt[last[c.tid]] = j
        last[c.tid] = j
    return nxt


def statements(calls: list, samples: list[Sampled], reads: list[int]) -> tuple[list[int], float]:
    """The host work of the statements that made ``reads`` (calls' indices), as the module docstring says:
    (the gaps it lies in, the share of each that is theirs); ([], 0.0) where no sample says so. A read's
    statement is its call's Python line and function where the trace has backtraces, and else the line and
    function of the samples taken inside the read."""
    mine = set(reads)
    keys = {(calls[i].source, calls[i].op) for i in reads if getattr(calls[i], "source", None)}
    keys |= {(src, op) for i, src, op, inside in samples if inside and src and i in mine}
    gap = [(src, op) for _, src, op, inside in samples if not inside]
    if not gap or not keys:
        return [], 0.0
    hit = sum(1 for k in gap if k in keys)
    if not hit:
        return [], 0.0
    tids = {calls[i].tid for i, _, _, inside in samples if not inside}
    want = sum(c.gap for c in calls if c.tid in tids and c.gap > 0) * hit / len(gap)
    nxt = thread_order(calls)
    lines = {src for src, _ in keys}
    # the statements' calls (the reads, and where the calls have lines, every call those lines made), and the
    # gap before each and after it
    made = mine | {j for j, c in enumerate(calls) if c.source is not None and c.source in lines}
    near = sorted({j for i in made for j in (i, nxt.get(i)) if j is not None and calls[j].gap > 0})
    room = sum(calls[j].gap for j in near)
    return (near, min(1.0, want / room)) if room > 0 else ([], 0.0)


def statements_cut(calls: list, samples: list[Sampled], dropped: list[int], own) -> float:
    """Take the host work of the dropped reads' statements out of ``calls`` (changed through ``own``, the
    replay's copy-on-write); returns the host time taken out (ns)."""
    near, f = statements(calls, samples, dropped)
    cut = 0.0
    for j in near:
        cut += calls[j].gap * f
        own(calls, j).gap *= 1.0 - f
    return cut
