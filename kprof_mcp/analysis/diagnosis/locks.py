"""A lock taken by spinning on a compare-and-swap, contended (issue 36, after the 24th held-back set).

``while tl.atomic_cas(lock, 0, 1) == 1: pass`` (the Triton layer-norm tutorial's backward merges its partial
sums so, GROUP_SIZE_M programs to a lock): with many programs on one lock its holders run one at a time, and
every other program's warps wait — at the barrier that shares the lock's result with the program's warps, at
the fences around its atomics — while one thread retries the compare-and-swap. Neither more warps nor more
loads in flight help (the latency what-ifs' premise, independent warps waiting on memory, does not hold:
more programs queue on the lock); spreading it so that programs rarely meet (more locks and buffers, or a
buffer per program summed by a second kernel) removes the waiting.

The evidence, from the recording alone: a compare-and-swap in the kernel's TTIR (``tt.atomic_cas``, whose
detail is its memory semantics, not a read-modify-write operation) and an exchange that releases (a
compare-and-swap loop alone — a float maximum emulated so — retries on a changed value, it holds no lock), an
atomic inside a loop of its SASS, and
the executed atomics (Nsight Compute's requests, warp level) at least :data:`SPIN_MIN` times what one pass
of the program's code issues (its SASS listing's atomics): the loop went round, the lock was contended.
"""

from __future__ import annotations

from .limiter import waiting_goes
from .metrics import Metrics

# A compare-and-swap's detail in ir_ops (parsers.ttir): its memory semantics.
SEMANTICS = frozenset({"acq_rel", "acquire", "release", "relaxed", "monotonic", "seq_cst"})
SPIN_MIN = 4.0  # the gate "is the loop going round at all": executed atomics over one pass's


def _cas_in_loop(m: Metrics) -> set | None:
    """The TTIR's atomics' details where the kernel has a compare-and-swap (its detail: memory semantics) and
    its SASS an atomic inside a loop, with the executed atomics measured; else None."""
    a, lst = m.accounting, m.listing
    if a is None or not a.atomic_requests or not m.grid_blocks or lst is None or not lst.loops:
        return None
    atomics = {op.get("detail") for op in m.ir_ops or () if op.get("kind") == "atomic"}
    return atomics if lst.loops.get("atomic") and atomics & SEMANTICS else None


def spins(m: Metrics) -> float | None:
    """The executed atomics per program over those one pass of its code issues, where the kernel spins on a
    compare-and-swap and the loop went round at least :data:`SPIN_MIN` times on average; else None."""
    atomics = _cas_in_loop(m)
    if atomics is None or "exch" not in atomics:
        return None
    a, lst = m.accounting, m.listing
    once = float(lst.classes.get("atomic") or 1)
    r = a.atomic_requests / m.grid_blocks / once
    return r if r >= SPIN_MIN else None


def lock_share(m: Metrics, lim) -> tuple[float, float, float] | None:
    """What-if for a contended spin lock (see the module docstring): the warps' waiting for it — their time
    at barriers and fences, w — goes; the instruction work stays (the issue slots and pipes bound it):
    T'/T = max(1 − w, the largest pipe or issue use). → (share 1 − T'/T, w, the spins' ratio) or None."""
    r = spins(m)
    if r is None or lim is None:
        return None
    w = m.accounting.share("barrier", "membar")
    return waiting_goes(lim, w), w, r


def retries(m: Metrics) -> float | None:
    """A compare-and-swap loop that emulates an atomic the hardware has (a float maximum, CUDA's ``atomicMax``
    for floats written as ``atomicCAS`` in a loop): the executed atomics over those one pass of every program's
    warps issues (warp-level requests against the listing's atomics x warps x programs), where the kernel has a
    compare-and-swap inside a loop and no exchange (no lock: :func:`spins`) and the loop went round (more than
    one pass); else None."""
    atomics = _cas_in_loop(m)
    a, lst = m.accounting, m.listing
    if atomics is None or "exch" in atomics or not lst.warps:
        return None
    once = float(lst.classes.get("atomic") or 0) * lst.warps * m.grid_blocks
    r = a.atomic_requests / once if once else 0.0
    return r if r > 1.0 else None


def cas_loop_share(m: Metrics, lim) -> tuple[float, float, float] | None:
    """What-if for a compare-and-swap loop where a native atomic serves (``tl.atomic_max``/``min``/``add``/...,
    a reduction that returns nothing): the retried attempts go, and so does the warps' waiting on the returned
    values (the memory and sync waits less the fences', as the contended reading takes them), while the L2's
    atomic units still apply one operation per element — the busiest unit's work of one pass, its busy time
    over the retries r: T'/T = max(1 − w, u_atomic_max / r, the largest pipe or issue use). Where the slices'
    atomic units were not measured, None (the contended reading stays). → (share 1 − T'/T, w, r)."""
    r = retries(m)
    a = m.accounting
    top = a.slices.get("l2_atomic_max") if a is not None else None
    if r is None or lim is None or top is None:
        return None
    w = a.unfenced_wait
    return 1.0 - max(1.0 - waiting_goes(lim, w), top / 100.0 / r), w, r
