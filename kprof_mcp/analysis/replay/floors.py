"""The host's time before each launch split between the launch cause and the host cause by what a lean eager
operation costs the same process's host under the same profiler: the ``nn.Linear`` calls kprof issues after a
command under Nsight Systems or torch.profiler (:mod:`kprof_mcp.capture.op_floor`), read from the trace by
:func:`traced_op_floor`.

A thread's calls from just after one launch to the next launch are that launch's **segment**; its issuing time
is the host gaps in it shorter than ``HOST_WORK_MIN_NS`` (Python, the dispatcher; less, before a read of the
GPU's values, what the read costs the host: the sync cause's) and the calls' own time that issue work
(launches, memsets, the cheap calls beside them: ``cuKernelGetName``, ...). Up to the floor (the same measure
over the floor's launches) that time is what any eager program pays per kernel: the launch cause's, which a
CUDA graph removes. Above it, the host does work of its own between the operations (a tracer or profiler hook,
a tensor subclass's ``__torch_function__``, module hooks, per-op logging or checks): the host cause's, which
removing that work removes, taken out of the segment's short gaps in proportion to their lengths. Each cause's
what-if takes only its own part (the other stays and bounds the step, as the next limiter does in the kernels'
model); where the trace holds no floor (a recording before 2026-11-29, an event-mode trace) the whole gap is
the launch cause's, as before.

Pure: a trace or graph in, numbers out. Times are ns, in the graph's host time (the plain pass's, once
:func:`~kprof_mcp.analysis.replay.to_plain` scaled a traced host to it: :func:`~.transforms.scale_host` scales
the floor with it).
"""

from __future__ import annotations

import statistics
from typing import Any

from ...parsers.kineto import Trace
from ..idle import HOST_WORK_MIN_NS
from ..timeline import OP_FLOOR_RANGE, cut
from .graph import Graph, build

ISSUE_KINDS = ("launch", "memset", "other")  # calls whose own time is part of issuing work


def segments(g: Graph) -> list[tuple[list[int], float, float]]:
    """Each launch's segment (see the module docstring), in order: (its calls' indices, the sum of their short
    gaps, its issuing time)."""
    out, cur = [], {}
    for i, c in enumerate(g.calls):
        cur.setdefault(c.tid, []).append(i)
        if c.kind == "launch":
            idx = cur.pop(c.tid)
            gaps = sum(_short(g, g.calls[j]) for j in idx)
            out.append((idx, gaps, gaps + sum(g.calls[j].dur for j in idx if g.calls[j].kind in ISSUE_KINDS)))
    return out


def _short(g: Graph, c) -> float:
    """A call's short host gap (Python, the dispatcher) less, before a synchronize or a copy the host waited
    for, what that read costs the host beyond its call (``read_floor_ns`` − its return time: the sync cause's,
    which dropping the read removes, :func:`~.transforms._reads_gone`); 0 for a long gap (host work's)."""
    if c.gap >= HOST_WORK_MIN_NS:
        return 0.0
    if g.read_floor_ns > 0 and (c.kind == "sync" or (c.kind == "copy" and c.covers)):
        return max(0.0, c.gap - max(0.0, g.read_floor_ns - c.ret))
    return c.gap


def _floor_ranges(tr: Trace):
    """The trace's :data:`OP_FLOOR_RANGE` rows (empty where it recorded none)."""
    return tr.ranges if tr.ranges.empty else tr.ranges[tr.ranges["name"] == OP_FLOOR_RANGE]


def traced_op_floor(tr: Trace) -> float | None:
    """The median issuing time of a launch of the floor's operations (the first one's left out) in the trace's
    last :data:`OP_FLOOR_RANGE`; None without one, or with fewer than two launches in it."""
    rows = _floor_ranges(tr)
    if rows.empty or tr.api.empty:
        return None
    lo, hi = float(rows["start"].iloc[-1]), float(rows["end"].iloc[-1])
    issue = [s for _, _, s in segments(build(tr, lo, hi))][1:]
    return float(statistics.median(issue)) if len(issue) >= 2 else None


def before_floor(tr: Trace) -> Trace:
    """``tr`` without the floor's operations and what followed them (kprof's, after the command: never a stage
    or part of the command's process); ``tr`` itself where it recorded none."""
    if (rows := _floor_ranges(tr)).empty:
        return tr
    return cut(tr, float("-inf"), float(rows["start"].min()) - 1.0)


def above_floor(g: Graph) -> dict[int, float]:
    """Per call, the share of its short host gap above the floor (the host cause's; the rest is the launch
    cause's, or before a read the read's cost, the sync cause's); empty without a floor. The segment's part above
    the floor is spread over its calls' issuing gaps (:func:`_short`) in proportion to them."""
    if g.op_floor_ns <= 0:
        return {}
    out = {}
    for idx, gaps, issue in segments(g):
        if over := _over(g, gaps, issue):
            out.update({j: over / gaps * _short(g, c) / c.gap for j in idx if (c := g.calls[j]).gap > 0})
    return out


def _over(g: Graph, gaps: float, issue: float) -> float:
    """A segment's issuing time above the floor, no more than its short gaps hold (the host cause's part)."""
    return min(issue - g.op_floor_ns, gaps) if issue > g.op_floor_ns and gaps > 0 else 0.0


def excess(g: Graph) -> dict[str, Any]:
    """``op_floor_ns`` (a lean eager op's issuing time), ``host_per_launch_ns`` (the window's, per launch) and
    ``op_excess_share`` (the host's own work above the floor over the window's issuing time, which the idle
    breakdown's launch time is split by); empty without a floor."""
    if g.op_floor_ns <= 0:
        return {}
    segs = segments(g)
    issuing = sum(s for _, _, s in segs)
    over = sum(_over(g, gaps, s) for _, gaps, s in segs)
    return {
        "op_floor_ns": g.op_floor_ns,
        "host_per_launch_ns": issuing / len(segs) if segs else None,
        "op_excess_share": over / issuing if issuing > 0 else 0.0,
    }
