"""The L2's slices as resources of their own (issue 36).

The L2 is built of slices, each serving the addresses that hash to it, each with its own tag lookups,
data path and atomic unit. Nsight Compute's L2 throughput (``lts__throughput.avg``) is the slices'
average; traffic to a few lines — a small table every program reads past L1 (``.cg``, volatile loads),
atomics to a few counters or bins — loads the one or two slices that own them to their peak while the
average stays low, and every SM waits on those slices. The busiest slice
(``lts__throughput.max.pct_of_peak_sustained_elapsed``) and the busiest atomic unit
(``lts__d_atomic_input_cycles_active.max``) are therefore resources like any pipe: when the busiest slice
is the stage's limiter (the most used resource, at least :data:`~.limiter.NEAR_PEAK` busy) its excess over
the average slice is the time a change that spreads the traffic — or keeps it off the L2 — removes.

What-if: the hot slice's work spread as evenly as the average slice's. A bound resource sets the stage's
time, so the time follows its work: T' = T · u_avg / u_max, and never below any other resource's busy time at
the rate tuned kernels reach (the L2 as a whole among them: its work stays) — T' = max(T · u_avg/u_max,
max_r u_r/a_r · T). Atomics to one address are a chain of dependent read-modify-writes on its slice, which
leaves that slice's unit idle between them: it sets the time at well under 100 % busy, so the slice needs only
to be the limiter (the most used resource, at least :data:`~.limiter.NEAR_PEAK`), not at 100 %.

Whose traffic: where the busiest atomic unit is as busy as the busiest slice, atomics to a few addresses
(contended atomics: reduce within each block first, or spread the counters); else reads or writes of a few
lines (a table gathered past L1, a flag every program polls: keep them in L1 or shared memory).

**Contended, not bound.** Atomics concentrated on a few slices (the busiest atomic unit more than
:data:`CONCENTRATED` times the average) whose slice is not the limiter are serialised with their warps
waiting: the memory-wait reading of contention (``catalogue.accounting_causes``) applies to them, and to
nothing else where the slices were measured — atomics spread over every slice (a scatter-add, an epilogue
with one writer per output) are not contended, whatever their warps wait on.

Pure: numbers in, facts out. None where the counters were not collected (recordings before 2026-11-27,
other architectures' names), so the memory-wait reading of contention stays there.
"""

from __future__ import annotations

from .limiter import ATTAINABLE, ATTAINABLE_PIPE, HOT, NEAR_PEAK, SLICE

# Atomics are on a few slices when the busiest atomic unit is more than this many times the average: a
# presence test (spread addresses hash evenly over the slices: the busiest within a few tens of % of the average).
CONCENTRATED = HOT


def contended(m) -> bool | None:
    """Whether the atomics are concentrated on a few L2 slices (None: the slices were not measured)."""
    a = m.accounting
    top = a.slices.get("l2_atomic_max") if a is not None else None
    if top is None:
        return None
    return top > CONCENTRATED * (a.slices.get("l2_atomic") or 0.0)


def hot_slice(m, lim) -> tuple[str, float, dict] | None:
    """(cause, share of T, facts) of the busiest L2 slice as the limiter (the limiter's hot-slice resource,
    :func:`.limiter.hot_slice_use`); None when it is not."""
    a = m.accounting
    if a is None or lim is None or lim.resource != SLICE or lim.util < NEAR_PEAK:
        return None
    hot = []
    if (
        (top := a.slices.get("l2")) is not None
        and (avg := a.levels.get("l2")) is not None
        and top > HOT * avg
    ):
        hot.append(("over_fetch", top / 100.0, avg / 100.0))
    if (top := a.slices.get("l2_atomic_max")) is not None and (avg := a.slices.get("l2_atomic")) is not None:
        if top > HOT * avg:
            hot.append(("atomics", top / 100.0, avg / 100.0))
    # The atomic unit's slice when it is at least as busy as the busiest slice's throughput: the atomics own it.
    cause, top, avg = max(hot, key=lambda h: (min(1.0, h[1]), h[0] == "atomics"))
    top = min(1.0, top)
    others = [u for u in lim.uses if u.key not in ("blocks", SLICE)]
    avg = min(avg, top)
    rest = max((u.util / ATTAINABLE.get(u.key, ATTAINABLE_PIPE) for u in others), default=0.0)
    after = max(avg / top, min(1.0, rest))
    facts = {
        "resource": "l2",
        "hot_slice_pct": 100.0 * top,
        "slice_avg_pct": 100.0 * avg,
        "atomic_share": a.atomic_sector_share if cause == "atomics" else None,
        "atomic_l2_sectors": a.atomic_l2_sectors if cause == "atomics" else None,
    }
    return cause, max(0.0, 1.0 - after), facts
