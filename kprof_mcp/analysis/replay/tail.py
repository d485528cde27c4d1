"""The what-if of evening out a kernel's last wave (the tail effect: Nsight Compute's "Tail Effect" rule, the
CUDA C++ Best Practices Guide's "grid a multiple of the SMs").

A kernel of ``w`` waves (:attr:`~.graph.Op.waves`: its blocks over the SMs times the blocks per SM its
registers, shared memory and warps allow), ``1 ≤ w <`` :data:`MAX_WAVES`, whose last wave is less than
:data:`LAST_WAVE_MAX` full, runs ``ceil(w)`` waves of which the last leaves most SMs idle; the same work spread
evenly over the SMs (blocks resized, or a grid that is a multiple of the SMs times the blocks per SM) takes
``w / ceil(w)`` of the time — the kernel-side tail what-if's factor, on each recorded launch.

Replayed (:func:`even_waves`): each launch of the kernel whose launches free the most recorded time this way
(:func:`worst`) lasts ``dur × w / ceil(w)``, and the step is re-timed, so a kernel off the critical path —
the GPU waiting on the host, or a short kernel among long ones — gains what the replay gives it, not its own
share. The kernels' recorded busy time, which bounds every replay from below, loses what the launches no
longer take. The same gates as the timeline's wave table: a partial last wave matters among few waves only.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from .graph import Graph, Op, _copy, own

MAX_WAVES = 4.0  # with more waves the blocks' own spread hides most of the tail
LAST_WAVE_MAX = 0.5  # a last wave at least half full leaves at most half the SMs idle for one wave


def cut(o: Op) -> float:
    """The share of ``o``'s time evening out its waves frees: ``1 − w / ceil(w)`` for a kernel with a
    partial last wave among few (see the module docstring), else 0."""
    w = o.waves
    if o.kind != "kernel" or not 1.0 <= w < MAX_WAVES:
        return 0.0
    last = w - math.floor(w)
    if last == 0.0 or last >= LAST_WAVE_MAX:
        return 0.0
    return 1.0 - w / math.ceil(w)


def _freed(g: Graph) -> dict[str, float]:
    out: dict[str, float] = {}
    for o in g.ops:
        if c := cut(o):
            out[o.name] = out.get(o.name, 0.0) + o.dur * c
    return out


def worst(g: Graph) -> str | None:
    """The kernel whose launches free the most recorded time when their waves are evened out, or None."""
    freed = _freed(g)
    return max(freed, key=freed.__getitem__) if freed else None


def even_waves(g: Graph, name: str | None = None) -> Graph:
    """Each launch of ``name`` (default: :func:`worst`) with a partial last wave lasting ``w / ceil(w)``
    of its recorded time (see the module docstring)."""
    name = worst(g) if name is None else name
    g = _copy(g)
    for j, o in enumerate(g.ops):
        if o.name == name and (c := cut(o)):
            own(g.ops, j).dur = o.dur * (1.0 - c)
            g.kernel_busy_ns = max(0.0, g.kernel_busy_ns - o.dur * c)
    return g


def summary(g: Graph) -> dict[str, Any] | None:
    """The kernel :func:`even_waves` changes, as facts: its name, waves and last wave's fill (medians over its
    launches with a partial last wave), its recorded time and the time evening it frees (per occurrence);
    None without one."""
    name = worst(g)
    if name is None:
        return None
    ops = [o for o in g.ops if o.name == name and cut(o)]
    w = statistics.median(o.waves for o in ops)
    return {
        "kernel": name,
        "waves": float(w),
        "last_wave": float(w - math.floor(w)),
        "kernel_ns": sum(o.dur for o in g.ops if o.name == name) / g.occurrences,
        "freed_ns": _freed(g)[name] / g.occurrences,
    }
