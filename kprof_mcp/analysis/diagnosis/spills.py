"""What-if for register spills from the counters (issue 36): the local-memory traffic and its instructions
removed, every resource's use recomputed, the next limiter bounding the gain.

Nsight Compute counts the spills' local accesses: their bytes through L1 (``Metrics.local_share`` of L1's
traffic) and their warp-level load and store requests (``Accounting.local_requests``). Kept in registers, the
values cross no memory level: L1's use keeps 1 − the local share, the LSU pipe's 1 − its local requests' share
of its instructions, the issue slots' 1 − the local requests' share of the warp instructions executed, and L2's
loses the local bytes its misses carried (at most all of them, never below the model's bytes and the atomics'
sectors), and so does DRAM's where it moved more than the model's bytes (the spills evicted from L2: since
2026-11-29, the forty-first held-back set's whole-row softmax, DRAM 73 % at 4.2x the model's bytes, held the what-if
at +37 % for +171 %). The arithmetic and the other memory traffic stay. Where a resource is bound (the limiter at least
NEAR_PEAK busy; a limiter the spills do not load, a math pipe, keeps its time: keep 1)

    T'/T = max(1 − u_lim · (1 − keep_lim), the largest use after the change)

and where none is (the warps wait), the waits on memory owned by the local accesses go (the memory-wait share
of the warps' time times the local share of L1's traffic) with the pipes and issue slots bounding it
(:func:`.limiter.waiting_goes`), and the uses after the change bound it too.

Before (2026-11-29), the share was the local share of L1's bytes, whatever limited the kernel: the
thirty-first held-back set's one-hot histogram, issue-bound at 81 % with 6 registers spilled (96 % of L1's
bytes local), was told +2,366 % for its spills, more than its integer work allows.
"""

from __future__ import annotations

from .catalogue import MEMORY_WAIT_MIN_SHARE
from .limiter import waiting_goes


def spill_share(m, lim) -> float | None:
    """The share of the time the spills' removal takes off (see the module docstring); None without the
    counters (the local share and the local requests), which leaves the caller's static estimates."""
    a = m.accounting
    if a is None or lim is None or m.local_share is None or not a.local_requests:
        return None
    local = min(1.0, max(0.0, m.local_share))
    keep = {"l1": 1.0 - local}
    if lsu := a.pipe_inst.get("lsu"):
        keep["lsu"] = max(0.0, 1.0 - a.local_requests / lsu)
    if a.inst_executed:
        keep["issue"] = max(0.0, 1.0 - a.local_requests / a.inst_executed)
    l2 = a.level_bytes.get("l2")
    floor = (m.bytes_model or 0.0) + 32.0 * (a.atomic_l2_sectors or 0.0)
    if l2 and m.l1_bytes:
        keep["l2"] = min(1.0, max(floor, l2 - local * m.l1_bytes) / l2)
    # and DRAM the local bytes its traffic carried beyond the model's (evicted spills), as L2 (never below the model)
    dram = (m.over_fetch_ratio or 0.0) * (m.bytes_model or 0.0)
    if dram and m.l1_bytes:
        keep["dram"] = min(1.0, max(floor, dram - local * m.l1_bytes) / dram)
    after = max((u.util * keep.get(u.key, 1.0) for u in lim.uses), default=0.0)
    if lim.bound and lim.resource in ("l1", "lsu", "l2", "dram") and a.memory_wait >= MEMORY_WAIT_MIN_SHARE:
        # a memory level the spills load, its warps waiting on memory: its idle time is its requests' latency,
        # which goes with the local requests as their traffic does (the re-reads' waits, catalogue._reread_waits)
        t = max(keep.get(lim.resource, 1.0), after)
    elif lim.bound:  # a limiter the spills do not load (a pipe) keeps the time: keep 1
        t = max(1.0 - lim.util * (1.0 - keep.get(lim.resource, 1.0)), after)
    else:
        t = max(1.0 - waiting_goes(lim, a.memory_wait * local), after)
    return max(0.0, 1.0 - t)
