"""The block scheduler as a resource of the machine (issue 36).

Every thread block of a launch is dispatched to an SM by the chip's block scheduler, at a rate of
about one block per SM clock for the whole chip on sm_90 (``machines.json``'s ``scheduler.blocks``,
measured by docs/evidence/machine-model/block_rate.py: an empty kernel's large grids), up to a ceiling
in time (``max_per_s``: ~0.6 ns a block on sm_90 above ~1550 MHz). A grid of G blocks therefore needs
G / min(rate × clock, ceiling) of the stage's time however little each block does; its
*use* is that time over the stage's. A kernel whose programs each do a few hundred bytes of work (one
short row per one-warp program) is bound by it: the SMs sit mostly empty while blocks trickle in, and
no pipe or memory level is busy.

The what-if (:func:`fewer_blocks`): give each program more work (several rows or tiles per program,
more warps per block) so a grid of a few waves of full blocks does the same work. The dispatch time
goes (a grid of a few thousand blocks takes microseconds); the stage's new time is the time the
dispatch did not cover, T − t_blocks, but never below the busiest other resource's work at the rate
tuned kernels reach (the next limiter) nor the launch floor. Pure: numbers in, a share out.
"""

from __future__ import annotations

KEY = "blocks"
# A use below this is not shown as a resource (every launch dispatches blocks; few are bound by it).
MIN_USE = 0.05


def busy_ns(m) -> float | None:
    """The time the block scheduler needs for the stage's grid at its rate (ns), or None: no grid
    (persistent kernels, timelines), several kernels per run (the grid is one kernel's), no machine
    model or no clock."""
    if not m.grid_blocks or m.machine is None or (m.kernels or 1) > 1 or m.kernel_busy < 0.999:
        return None
    rate = m.machine.rate(KEY)
    clock = m.sm_clock_hz or m.clock_hz
    if not rate or not clock:
        return None
    return 1e9 * m.grid_blocks / min(rate * clock, ceiling(m.machine) or float("inf"))


def ceiling(machine) -> float | None:
    """The dispatcher's ceiling in blocks per second where one was measured (``max_per_s``: on sm_90 the
    rate stops following the SM clock above ~1550 MHz), else None."""
    from ... import machines

    spec = ((machines.table().get("archs") or {}).get(machine.arch) or {}).get("scheduler") or {}
    got = (spec.get(KEY) or {}).get("max_per_s")
    return float(got) if got else None


def use(m) -> float | None:
    """The block scheduler's use over the stage's time (held to 1 by :class:`.limiter.Use`), or None
    where it is not modelled or below :data:`MIN_USE`."""
    t = busy_ns(m)
    if t is None or not m.time_ns:
        return None
    u = t / m.time_ns
    return u if u >= MIN_USE else None


def fewer_blocks(m, lim, attainable: dict, attainable_pipe: float) -> tuple[float, dict] | None:
    """(share, facts) of the what-if that gives each program more work, when the block scheduler is the
    bound limiter; None otherwise."""
    if lim is None or lim.resource != KEY or not lim.bound or not m.time_ns:
        return None
    T = m.time_ns
    t_blocks = lim.util * T
    others = [u for u in lim.uses if u.key != KEY]
    nxt = max(others, key=lambda u: u.util / attainable.get(u.key, attainable_pipe), default=None)
    bound = nxt.util * T / attainable.get(nxt.key, attainable_pipe) if nxt is not None else 0.0
    new_t = max(T - t_blocks, bound, m.floor_ns or 0.0)
    facts = {
        "resource": KEY,
        "util_pct": 100.0 * lim.util,
        "grid_blocks": m.grid_blocks,
        "occupancy_pct": m.occupancy_pct,
        "next_limiter": nxt.key if nxt is not None else None,
        "source": lim.source,
    }
    return max(0.0, 1.0 - new_t / T), facts
