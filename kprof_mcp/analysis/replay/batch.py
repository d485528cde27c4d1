"""The what-if of batching a launch loop: a step that launches the same kernel many times in a row,
each launch on a part of the GPU (``[a[i] @ w[i] for i in range(B)]``, per-head or per-expert code
written as a Python loop), done as one launch over all the items (``torch.bmm``, a batched or grouped
GEMM, ``torch.vmap``, a persistent kernel looping over the items).

A **run** (:func:`runs`): on one host thread, ``MIN_RUN`` or more consecutive launch calls of the same
kernel — same name, grid and block, on the same stream — with nothing between them but calls that
neither launch nor wait (the dispatcher's ``cuKernelGetAttribute``, ``cudaStreamIsCapturing``), and
no step's start between two of them (the graph's ``cuts``: the items of one step, not one item per
step). Each launch must leave the GPU partly idle: its blocks fill less than the GPU (``Op.fill`` < 1,
from the launch's blocks per SM) or it lasts about as long as an empty kernel (at most
``NEAR_FLOOR_X`` times the device's ``min_kernel_ns``), so that its duration is mostly the launch's
fixed cost. That is the whole legality gate: the trace does not say whether the items are
independent. A chain where each launch reads the last one's output (``y = y + 1`` a hundred times)
is a run too; its fix is fusion, whose one kernel is no longer than the batched one.

Replayed batched (:func:`batch_launches`): the run's first launch issues one kernel whose duration is
the run's work at full fill, Σ duration × fill, never below the longest of its kernels (an item does
not get faster) nor the device's shortest kernel; the other N − 1 launch calls, the calls between
them and the host time between them (the loop's own Python and dispatcher time, as recorded: the
host-side gaps between consecutive launches of the run) cost nothing. The kernels' recorded busy time,
which bounds every replay from below, loses what the run's kernels no longer take. Where the host's Python was
sampled, the loop statement's host work goes too (:func:`_statement_rest`: the line the runs' launches came from,
its share of the thread's host time).
"""

from __future__ import annotations

import bisect
import statistics
from dataclasses import dataclass, field
from typing import Any

from .floors import above_floor
from .graph import Graph, _copy, _h2d, own

MIN_RUN = 8  # launches in a row: fewer is not a loop over items
NEAR_FLOOR_X = 2.0  # a kernel this close to an empty one's time is mostly its launch's fixed cost


@dataclass
class Run:
    """Consecutive launches of one kernel on one thread (see the module docstring)."""

    tid: Any
    key: tuple[Any, ...]  # (kernel name, (grid, block), stream)
    launches: list[int] = field(default_factory=list)  # their calls
    calls: list[int] = field(default_factory=list)  # every call from the first launch to the last


def _partial(g: Graph, r: Run) -> bool:
    ops = [g.ops[g.calls[i].ops[0]] for i in r.launches]
    return all(o.fill < 1.0 or o.dur <= NEAR_FLOOR_X * g.gpu_floor_ns for o in ops)


def runs(g: Graph) -> list[Run]:
    """The graph's runs of launches that batching would make one (see the module docstring)."""
    found: list[Run] = []
    open_: dict[Any, Run] = {}

    def close(tid: Any) -> None:
        r = open_.pop(tid, None)
        if r and len(r.launches) >= MIN_RUN and _partial(g, r):
            r.calls = r.calls[: r.calls.index(r.launches[-1]) + 1]
            found.append(r)

    for i, c in enumerate(g.calls):
        cur = open_.get(c.tid)
        # A launch the profiler held up (a "first" launch by its duration) is still one of the loop's.
        if c.kind in ("launch", "first") and len(c.ops) == 1 and g.ops[c.ops[0]].kind == "kernel":
            o = g.ops[c.ops[0]]
            key = (o.name, o.shape, o.stream)
            if cur and cur.key == key and not _cut_between(g, g.calls[cur.launches[-1]].start, c.start):
                cur.launches.append(i)
                cur.calls.append(i)
                continue
            close(c.tid)
            open_[c.tid] = Run(c.tid, key, [i], [i])
        elif cur and c.kind == "other" and not c.ops and not c.covers:
            cur.calls.append(i)
        else:
            close(c.tid)
    for tid in list(open_):
        close(tid)
    return sorted(found, key=lambda r: r.launches[0])


def _cut_between(g: Graph, a: float, b: float) -> bool:
    """A step starts after ``a`` and at or before ``b``."""
    k = bisect.bisect_right(g.cuts, a)
    return k < len(g.cuts) and g.cuts[k] <= b


def batched_ns(g: Graph, r: Run) -> float:
    """The run's kernels as one launch at full fill (see the module docstring)."""
    ops = [g.ops[g.calls[i].ops[0]] for i in r.launches]
    work = sum(o.dur * o.fill for o in ops)
    return max(work, max(o.dur for o in ops), g.gpu_floor_ns)


def batch_launches(g: Graph) -> Graph:
    """Every run launched as one kernel over its items (see the module docstring)."""
    found = runs(g)
    over = above_floor(g)
    g = _copy(g)
    for r in found:
        ops = [g.calls[i].ops[0] for i in r.launches]
        d = batched_ns(g, r)
        g.kernel_busy_ns = max(0.0, g.kernel_busy_ns - sum(g.ops[j].dur for j in ops) + d)
        own(g.ops, ops[0]).dur = d
        for j in ops[1:]:  # empty, right after the batched kernel on its stream
            o = own(g.ops, j)
            o.dur = o.gap = o.issue = 0.0
        for i in r.calls[1:]:
            c = own(g.calls, i)
            c.gap *= over.get(i, 0.0)  # the host's own work above an eager op's stays (.floors)
            c.dur = c.ret = 0.0
    _statement_rest(g, found)
    return g


def _statement_rest(g: Graph, found: list[Run]) -> None:
    """The loop statement's host work goes with its runs (where the host's Python was sampled, :mod:`.sampled`):
    the per-item tensors it builds and drops, the ``torch.stack`` of the items' outputs on the same line, and
    within the runs what lies above a lean eager op's issuing time (:mod:`.floors` keeps that part as the host
    cause's where nothing says whose it is). The statement is the (user line, library function) of the samples
    taken inside the runs' launches; of the samples in the thread's host gaps, the share f at that statement is
    its work (each sample stands for an equal share of the sampled host time), and every host gap of the thread,
    and its tail, keeps 1 − f of what it has. Without such samples nothing changes."""
    launches = {i for r in found for i in r.launches}
    keys = {(src, op) for i, src, op, within in g.samples if within and i in launches and src}
    tids = {g.calls[i].tid for i in launches}
    gaps = [(src, op) for i, src, op, within in g.samples if not within and g.calls[i].tid in tids]
    if not keys or not gaps:
        return
    f = sum(1 for k in gaps if k in keys) / len(gaps)
    if not f:
        return
    for i, c in enumerate(g.calls):
        if c.tid in tids and c.gap > 0:
            own(g.calls, i).gap *= 1.0 - f
    g.tails = {t: v * (1.0 - f) if t in tids else v for t, v in g.tails.items()}


def summary(g: Graph) -> dict[str, Any] | None:
    """The run whose batching frees the most recorded time, as facts: its kernel, launches per run,
    runs per occurrence, grid and fill, the host time between two of its launches (median) and its
    kernels' time against the batched kernel's; None without a run."""
    found = runs(g)
    if not found:
        return None

    def freed(r: Run) -> float:
        return g.calls[r.calls[-1]].end - g.calls[r.calls[0]].start

    best = max(found, key=freed)
    same = [r for r in found if r.key == best.key]
    ops = [g.ops[g.calls[i].ops[0]] for i in best.launches]
    grid = best.key[1][0]
    gaps = [g.calls[b].start - g.calls[a].end for a, b in zip(best.launches, best.launches[1:])]
    return {
        "kernel": str(best.key[0]),
        "launches_per_run": len(best.launches),
        "runs_per_occurrence": len(same) / g.occurrences,
        "grid_blocks": int(grid) if grid is not None and grid == grid else None,
        "fill": float(ops[0].fill),
        "host_gap_ns": float(statistics.median(gaps)),
        "kernels_ns": float(sum(o.dur for o in ops)),
        "batched_ns": float(batched_ns(g, best)),
    }


def copy_runs(g: Graph) -> list[list[int]]:
    """Runs of host-to-device copies that one transfer would replace (``[s.to("cuda") for s in samples]``,
    a Dataset's per-sample tensors moved one by one): on one host thread, ``MIN_RUN`` or more copy calls in
    a row, each of one host-to-device copy, with nothing between them but calls that launch nothing (the
    synchronise PyTorch adds after a pageable copy, allocations, the dispatcher's queries) and no step's
    start between two of them. Each run is its copy calls' indices."""
    found: list[list[int]] = []
    open_: dict = {}

    def close(tid) -> None:
        r = open_.pop(tid, None)
        if r and len(r) >= MIN_RUN:
            found.append(r)

    for i, c in enumerate(g.calls):
        cur = open_.get(c.tid)
        one = len(c.ops) == 1 and g.ops[c.ops[0]].kind == "memcpy" and _h2d(g.ops[c.ops[0]].name)
        if c.kind == "copy" and one:
            if cur and not _cut_between(g, g.calls[cur[-1]].start, c.start):
                cur.append(i)
            else:
                close(c.tid)
                open_[c.tid] = [i]
        elif cur is not None and not c.ops and c.kind in ("sync", "alloc", "other"):
            continue
        else:
            close(c.tid)
    for tid in list(open_):
        close(tid)
    return sorted(found)


def batch_copies(g: Graph) -> Graph:
    """Every run of :func:`copy_runs` as one transfer: the first call copies the run's bytes at the pinned
    host-to-device rate (never faster than its longest copy), the other copies, the calls between them and
    the host time between them (the loop's own Python and dispatcher time, as recorded) cost nothing."""
    found = copy_runs(g)
    if not found:
        return g
    g = _copy(g)
    for r in found:
        ops = [g.calls[i].ops[0] for i in r]
        total = sum(g.ops[j].nbytes for j in ops)
        d = max(total / g.pinned_h2d_bytes_per_s * 1e9, max(g.ops[j].dur for j in ops))
        own(g.ops, ops[0]).dur = d
        for j in ops[1:]:
            o = own(g.ops, j)
            o.dur = o.gap = o.issue = 0.0
        for i in range(r[0] + 1, r[-1] + 1):
            if g.calls[i].tid == g.calls[r[0]].tid:
                c = own(g.calls, i)
                c.gap = c.dur = c.ret = 0.0
                c.covers = []
    return g
