"""Issue 26's cause catalogue: causes named from the hardware's accounting (stall reasons, pipes,
instruction mix, atomics, shared-memory conflicts), and the evidence the generic advice quotes."""

from __future__ import annotations

import math

from . import slices
from .core import (  # noqa: F401 (re-exported)
    CORE_LIMITERS,
    EXPANDING_CODE,
    FLOPS_PER_OP,
    INSTRUCTION_SIDE,
    core_keeps,
    core_model,
    core_work,
    executed_flops,
    integer_ops,
)
from .library import LIBRARY_MIN_LAUNCH_NS, LIBRARY_SLOW, library_gemm_excess  # noqa: F401 (re-exported)
from .limiter import ATTAINABLE, NEAR_PEAK, _tensor_for, dot_work, limiter, stages_a_dot, waiting_goes
from .locks import cas_loop_share, lock_share
from .metrics import (
    METRICS_ONLY_MAX_SHARE,
    OVER_FETCH_HEALTHY,
    TC_HEALTHY_PCT,
    Metrics,
    compute_utilisation,
)

# Issue 26's catalogue: causes named from the hardware's accounting, each with the evidence that proves it and
# the share of the time that evidence says it owns. No constant here was fitted on the calibration
# pairs: the thresholds are gates ("is it there at all"), the shares come from the counters.
MEMORY_WAIT_MIN_SHARE = 0.5  # warps waiting on memory/each other own most of the time
ATOMIC_MIN_SECTOR_SHARE = 0.01  # atomics are a visible part of the global traffic
FENCE_MIN_SHARE = 0.10  # warps waiting on memory fences are a visible part of their time
BANK_CONFLICT_MIN_PER_WAVEFRONT = 0.25
SHARED_WAIT_MIN_SHARE = 0.2
MEMORY_LATENCY_STALLS = ("long_scoreboard", "lg_throttle", "tex_throttle")  # warps waiting on global memory
DIVERGENCE_MIN = 0.25  # a quarter of the lanes idle in the average warp instruction
DIVERGENCE_MIN_ISSUE_PCT = 50.0  # the SMs issue often enough for lost lanes to cost time
REUSE_TILE = 128  # the tile edge (BLOCK_M = BLOCK_N) a tuned GEMM-like kernel reaches on Hopper


UNCOALESCED_SECTORS_PER_REQUEST = 24.0  # 32 is one 32-byte sector per thread: nearly every access its own


def uncoalesced(m: Metrics) -> tuple[tuple[str, float], ...]:
    """For over-fetch, what the accounting says about why: the global accesses (``loads``,
    ``stores``) whose requests touch nearly a sector per thread, with their sectors per request."""
    a = m.accounting
    if a is None:
        return ()
    return tuple(
        (k, v)
        for k, v in (("loads", a.ld_sectors_per_request), ("stores", a.st_sectors_per_request))
        if v is not None and v >= UNCOALESCED_SECTORS_PER_REQUEST
    )


def uncoalesced_l2_share(m: Metrics, lim) -> float | None:
    """What-if for uncoalesced accesses whose traffic L2 absorbs (the sectors merge there, so DRAM
    bytes stay near the model and DRAM over-fetch sees nothing): the limiter ``lim`` is L2 or L1 at
    least NEAR_PEAK busy, a global access class touches nearly a sector per thread (:func:`uncoalesced`)
    and L2 moved r > 1.25 times the model's bytes. Coalesced, the same accesses move the model's bytes:
    the cache levels' uses scale by 1/r (L1's wavefronts shrink with the sectors they carry; an
    approximation where coalesced and uncoalesced accesses share L1), every other use stays, and

        T'/T = max(1 − u·(1 − 1/r), the largest use after the change)

    with u the limiter's use u_lim and the part of the time it leaves unused while the warps wait for
    instructions to be fetched (``no_instruction`` among the stalls other than ``selected``): the code removed is
    the code whose footprint overflowed the instruction cache (set 28's unrolled Taylor series). Other waits stay.

    → share 1 − T'/T. None when it does not apply."""
    a = m.accounting
    if a is None or lim is None or not lim.bound or lim.resource not in ("l2", "l1") or not uncoalesced(m):
        return None
    l2, atom = a.level_bytes.get("l2"), _atomic_bytes(a)
    if not l2 or not m.bytes_model or l2 - atom <= OVER_FETCH_HEALTHY * m.bytes_model:
        return None
    keep = (m.bytes_model + atom) / l2  # the atomics' sectors stay
    after = [u.util * (keep if u.key in ("l2", "l1") else 1.0) for u in lim.uses]
    return max(0.0, 1.0 - max(1.0 - lim.util * (1.0 - keep), max(after, default=0.0)))


def reread_share(m: Metrics, lim) -> tuple[float, str, float] | None:
    """What-if for data re-read through a cache level that limits the stage (a loop-invariant load inside
    a loop, an input each program or thread reads again, reuse left to the cache): the limiter ``lim`` is
    L1 (or the LSU pipe that issues its requests) or L2, at least NEAR_PEAK busy, and that level moved
    r > 1.25 times the model's bytes. A dot's operands are meant to be re-read once per tile: a dot is left
    to the tile what-ifs where its FLOPs at the reuse of REUSE_TILE-wide tiles need more than the model's
    bytes, or its tensor pipe is near its peak (a dot of low intensity by design, a decode's, is not).
    L1's bytes are its
    tag-stage bytes (global and local accesses, not shared memory) less the spills' (their own cause),
    L2's its sector bytes. Kept in registers or shared memory, the data crosses that level once: its use
    (and the level and pipe that carried the same requests: LSU for L1, L1 for L2) scales by 1/r — at L1,
    the part of it the global accesses make (their share g of L1's wavefronts, of the LSU's instructions
    their loads'), 1 − g·(1 − 1/r): without a dot (whose operands shared memory stages, so its traffic goes
    with the loads) shared memory's wavefronts are a reduction's or a layout change's, and stay; where
    L1's re-reads missed and crossed L2 too and L2 is near its peak as well (r' > 1.25 times the model's
    bytes: the eighth held-back set's K/V read once per query head), L2's use scales by 1/r' and the re-read is named at L2;
    where the stage also did more CUDA-core work than its FLOP model (each output adding its window again: the
    sixth held-back set's rolling sum, 32x the FLOPs), that work goes with the copies it was done on: the issue
    slots and pipes keep the model's share (:func:`core_keeps`); every other use stays, and

        T'/T = max(1 − u·(1 − 1/r), the largest use after the change)

    with u the limiter's use u_lim and the part of the time it leaves unused while the warps wait for
    instructions to be fetched (``no_instruction`` among the stalls other than ``selected``): the code removed is
    the code whose footprint overflowed the instruction cache (set 28's unrolled Taylor series). Other waits stay.

    Where no resource is bound and the warps wait on memory most of their time (coalesced re-reads of what L2 holds:
    set 40's absmax rescanned by every program, L2 19x the model's bytes), the waits are the re-reads' round trips
    and go with them: L1, L2 and LSU scale by L2's keep, the copies' arithmetic too, T'/T = max(keep, uses after).

    → (share 1 − T'/T, the level, r). Uncoalesced accesses are :func:`uncoalesced_l2_share`'s. None when
    it does not apply."""
    a = m.accounting
    if a is None or lim is None or not m.bytes_model or uncoalesced(m):
        return None
    if not lim.bound:
        return _reread_waits(m, lim)
    # A dot's operands cross the caches once per tile: its least traffic is its FLOPs at the reuse of
    # REUSE_TILE-wide tiles (the small-tile what-if's target). Where that is more than the model's bytes
    # the re-reads are the tiles' (left to the tile what-ifs), and so where the tensor pipe is near its peak.
    if dot_work(m) and (
        lim.use("tensor") >= NEAR_PEAK
        or not m.flops
        or not m.elem_bytes
        or m.flops * m.elem_bytes / REUSE_TILE > m.bytes_model
    ):
        return None
    l2, atom = a.level_bytes.get("l2"), _atomic_bytes(a)
    reads = (
        l2 - atom if l2 else None
    )  # an atomic's read-modify-write at L2 is the atomics' traffic, no re-read
    if lim.resource == "l2":
        level, moved, also = "l2", reads, ("l1",)
    elif lim.resource in ("l1", "lsu"):
        local = (m.local_share or 0.0) * (m.l1_bytes or 0.0)
        level, moved, also = "l1", (m.l1_bytes - local) if m.l1_bytes else None, ("lsu",)
    else:
        return None
    if not moved or moved <= OVER_FETCH_HEALTHY * m.bytes_model:
        return None
    r = moved / m.bytes_model
    keep = {level: 1.0 / r, **{k: 1.0 / r for k in also}}
    # At L1 only the global accesses' part of L1 and of the LSU's issues goes; a dot's operands are staged in
    # shared memory (that traffic goes with the loads), without a dot shared memory's traffic stays.
    if level == "l1" and not stages_a_dot(m):
        lsu, ld = a.pipe_inst.get("lsu"), a.global_ld_requests
        for key, part in (("l1", a.l1_global_share), ("lsu", min(1.0, ld / lsu) if lsu and ld else None)):
            keep[key] = 1.0 - (1.0 if part is None else part) * (1.0 - 1.0 / r)
    if level == "l2":  # its atomics' traffic stays
        keep["l2"] = (m.bytes_model + atom) / l2
    # The arithmetic done on the re-read copies beyond the model's FLOPs (each output summing its window
    # again) goes with them: the instruction stream keeps no more than the model's work (core_keeps).
    for key, k in core_keeps(m).items():
        keep.setdefault(key, k)
    # L1's re-reads that missed crossed L2 too, where L2 is near its peak as well (it would be the next
    # limiter): it carried its own r' = its bytes / the model's, and the re-read is named there
    busy_l2 = lim.use("l2") >= NEAR_PEAK
    if level == "l1" and busy_l2 and reads and reads > OVER_FETCH_HEALTHY * m.bytes_model:
        level, keep["l2"] = "l2", (m.bytes_model + atom) / l2
    after = [u.util * keep.get(u.key, 1.0) for u in lim.uses]
    return (
        max(
            0.0,
            1.0
            - max(
                1.0 - lim.util * (1.0 - keep[lim.resource if lim.resource != "lsu" else "l1"]),
                max(after, default=0.0),
            ),
        ),
        level,
        r,
    )


def _reread_waits(m: Metrics, lim) -> tuple[float, str, float] | None:
    """:func:`reread_share` where no resource is bound and the warps' waits are memory's (see there)."""
    a, over = m.accounting, m.over_fetch_ratio or 0.0
    l2, atom = a.level_bytes.get("l2") or 0.0, _atomic_bytes(a)
    if lim.source != "counters" or a.memory_wait < MEMORY_WAIT_MIN_SHARE or over > OVER_FETCH_HEALTHY:
        return None  # not memory's waits, or DRAM over-fetch's (its own cause)
    if l2 - atom <= OVER_FETCH_HEALTHY * m.bytes_model:
        return None
    keep = {**core_keeps(m), "l2": (m.bytes_model + atom) / l2}
    keep.update({k: keep["l2"] for k in ("l1", "lsu")})
    after = max((u.util * keep.get(u.key, 1.0) for u in lim.uses), default=0.0)
    return max(0.0, 1.0 - max(keep["l2"], after)), "l2", (l2 - atom) / m.bytes_model


def _atomic_bytes(a) -> float:
    """The bytes of the L2 sectors global atomics and reductions touched (32 a sector): their own traffic,
    which neither re-reading nor coalescing removes."""
    return 32.0 * (a.atomic_l2_sectors or 0.0)


# A pipe this busy is doing work, not idling with a stray instruction (a gate: is it there at all).
TENSOR_THERE = 0.05


def excess_tensor_work(m: Metrics, lim) -> tuple[float, float] | None:
    """What-if for tensor-core work the stage's FLOP model does not count (MMAs on tiles that are zero
    by construction — causal, masked or padded —, tiles computed more than once — a grid axis left over
    from a split, a symmetric product in full —, error-compensating splits such as 3xTF32): the tensor
    pipe did r = u·P·T / F > 1.25 times the model's F FLOPs (u its utilisation from the counters, P its
    documented peak for the stage's dtype at the clock the stage ran, the figure a tuned GEMM's
    utilisation is a share of: r is 0.93-1.0 on the recorded healthy GEMMs). The surplus MMAs come in
    whole units — a tile's K steps, a program, a split's extra products — each with the operand loads, the
    address arithmetic, the issue slots and the waits that feed it: skipped, every resource's work and the
    warps' chains scale by 1/r, so T'/T = 1/r (the speed-of-light bound caps it where the opportunity is
    ranked). Recorded (H100): causal zero tiles, a symmetric product in full, 3xTF32, a 4-fold grid
    measured 1.76x, 1.83x, 3.94x and 3.90x for r = 2, 2, 3 and 4.

    A stage whose model counts no FLOPs at all (a gather, a copy, a lookup) whose tensor pipe is busy
    nonetheless (a gather written as a one-hot matrix product, a permutation as a matmul by a permutation
    matrix) did only surplus MMAs: r is infinite, every MMA and what feeds it goes and the stage's
    speed-of-light bound (its bytes at the device's roof) is what stays. The gate is "is it there at all":
    the tensor pipe at least ``TENSOR_THERE`` busy.

    → (share 1 − 1/r, r). None when it does not apply (or the FLOP model is the thing to fix)."""
    if lim is None or not m.time_ns or m.machine is None:
        return None
    if (m.flops and not m.tensor_work) or (not m.flops and not m.attainable_sol_ns):
        return None
    rate = m.machine.pipes.get(_tensor_for(m.dtype or ""))
    u = next((x.util for x in lim.uses if x.key == "tensor" and x.source == "counters"), None)
    clock = m.sm_clock_hz
    if rate is None or u is None or not clock or not m.sm_count:
        return None
    if not m.flops:  # no FLOPs needed: every MMA is surplus (its bytes' roof is what stays)
        return (1.0, math.inf) if u >= TENSOR_THERE else None
    peak = (rate.table or rate.rate) * m.sm_count * clock
    r = u * peak * m.time_ns * 1e-9 / m.flops
    if r <= OVER_FETCH_HEALTHY:
        return None
    return 1.0 - 1.0 / r, r


def host_link_bytes(m: Metrics, lim) -> tuple[float, float] | None:
    """What-if for a kernel whose loads and stores go over the host link (PCIe, NVLink-C2C) to system
    memory — pinned or mapped host memory read at every call (zero copy) — with the host link the busiest
    resource: the data in device memory instead (copied once), its B bytes cross DRAM instead. Each
    resource's time is recomputed from its work: the host link's goes, DRAM's grows by B at its attainable
    rate (90 % of the device's peak), the others (L2, which the sectors cross either way, the pipes) stay:

        T'/T = max(the largest use after the change, (DRAM bytes + B) / (0.9 · P_dram · T))

    → (share 1 − T'/T, B). None when it does not apply."""
    a = m.accounting
    if lim is None or a is None or lim.resource != "host" or not m.time_ns or not m.dram_peak_bps:
        return None
    b = float(a.level_bytes.get("host") or 0.0)
    if b <= 0:
        return None
    t = m.time_ns * 1e-9
    dram_u = next((x.util for x in lim.uses if x.key == "dram"), 0.0)
    dram_after = dram_u + b / (ATTAINABLE["dram"] * m.dram_peak_bps * t)
    after = max((x.util for x in lim.uses if x.key not in ("host", "dram")), default=0.0)
    return max(0.0, 1.0 - max(after, dram_after)), b


def dram_busy(m: Metrics, lim) -> bool:
    """Whether DRAM traffic costs a stage time though SPEC's classification calls it compute-bound: the counters
    measured the limiter and the DRAM is busy (at the scattered-sector saturation or more). The over-fetch what-if
    is then asked (it bounds itself by the SMs' work that stays): the thirty-ninth held-back set's top-p scan, DRAM
    66 % at 49x the model's bytes, the issue slots 65 %. A tensor-core GEMM at DRAM 24 % is not (its operands'
    re-reads overlap its math)."""
    return lim is not None and lim.source == "counters" and (m.dram_pct or 0.0) >= m.scattered_dram_pct


def excess_core_work(m: Metrics, lim) -> tuple[float, float] | None:
    """What-if for CUDA-core work the stage's FLOP model does not count — lanes of a block wider than
    the data (masked off but computing all the same), loop iterations past a lane's own end (a loop run
    to the program's longest item), values recomputed instead of kept: the limiter ``lim`` is the issue
    slots or a CUDA-core pipe, at least NEAR_PEAK busy, and the stage executed r = F_exec / F > 1.25 times
    the model's F FLOPs on the CUDA cores (F_exec from the op-class counters; the issue slots carry FP and
    integer thread ops alike (a linear scan where a binary search does: eighth held-back set); where the limiter is the ALU
    pipe, its integer and logic thread ops against the model's operations: a popcount emulated bit by bit, a
    sort where one reduction does, a search repeated by every program). Not for tensor-core stages
    (their FLOPs belong to the tensor pipe: the dot moves are theirs) nor where the TTIR holds code that
    expands one modelled FLOP into many (precise libdevice functions, IEEE division: the code moves').
    An L1- or LSU-bound stage (that stream's loads and stores: a dense elimination where a tridiagonal sweep
    does, set 31) takes the issue slots' r, unless re-reads explain the L1's traffic (the caller's check).

    The instruction stream is taken to shrink with the FP work it carries: the instruction-side uses
    (issue slots, CUDA-core pipes, LSU, L1) scale by 1/r, DRAM and L2 keep the model's bytes and lose the
    traffic beyond them with the instructions that carried it (:func:`_level_keep`), and

        T'/T = max(1 − u·(1 − 1/r), the largest use after the change)

    with u the limiter's use u_lim and the part of the time it leaves unused while the warps wait for
    instructions to be fetched (``no_instruction`` among the stalls other than ``selected``): the code removed is
    the code whose footprint overflowed the instruction cache (set 28's unrolled Taylor series). Other waits stay.

    Where no resource is bound (the warps wait: a latency-bound stage, 2026-11-29 after the thirty-second
    held-back set's softmax backward through an N x N Jacobian, 931x the model's FLOPs with its FMA pipe at 33 %),
    and the warps' waits are not memory's or each other's (under ``MEMORY_WAIT_MIN_SHARE`` of their time: not a
    lock, an imbalance's idle SMs or a gather's round trips), the waits are the chains of that work, as the
    tensor what-if's are its MMAs': with the issue slots' r (FP and integer thread ops against the model's
    FLOPs), every instruction-side use and the waiting scale by 1/r: T'/T = max(1/r, the uses below L1).

    → (share 1 − T'/T, r). None when it does not apply."""
    if lim is None or lim.source != "counters" or (lim.bound and lim.resource not in INSTRUCTION_SIDE):
        return None
    if not (work := core_work(m)):
        return None
    if not lim.bound and (m.accounting is None or m.accounting.memory_wait >= MEMORY_WAIT_MIN_SHARE):
        return None  # latency-bound: the surplus instructions' chains (see above), not memory's waits
    # the issue slots carry every class (FP and integer thread ops alike), and so do a latency-bound stage's chains
    key = lim.resource if lim.bound and lim.resource in CORE_LIMITERS else "issue"
    executed, needed = work[key], core_model(m)[key]
    if not executed or not needed:
        return None
    r = executed / needed
    if r <= OVER_FETCH_HEALTHY:
        return None
    keep = 1.0 / r
    if not lim.bound:
        below = max(
            (u.util * _level_keep(m, u.key, keep) for u in lim.uses if u.key not in INSTRUCTION_SIDE),
            default=0.0,
        )
        return max(0.0, 1.0 - max(keep, below)), r
    after = [u.util * (keep if u.key in INSTRUCTION_SIDE else _level_keep(m, u.key, keep)) for u in lim.uses]
    # The time the limiter leaves unused where the warps wait for instructions to be fetched (no_instruction:
    # the code's footprint overflowing the instruction cache) goes with the code that is removed.
    a = m.accounting
    fetch = 0.0 if a is None else a.share("no_instruction") / max(1e-9, 1.0 - a.share("selected"))
    own = lim.util + (1.0 - lim.util) * min(1.0, fetch)
    return max(0.0, 1.0 - max(1.0 - own * (1.0 - keep), max(after, default=0.0))), r


def _level_keep(m: Metrics, key: str, keep: float) -> float:
    """The share of a memory level's use below L1 that stays when the instruction stream keeps ``keep`` of its
    work (:func:`excess_core_work`): the bytes the model needs stay; the level's bytes beyond them were carried
    by the loads and stores of that stream, as the L1's are, and go with it (set 38's sines of large arguments:
    the Payne-Hanek path's table reads at L2 66 % where the model's bytes need a thousandth of it)."""
    a, need = m.accounting, m.bytes_model
    if not need:
        return 1.0
    moved = None
    if key == "l2" and a is not None:
        moved = a.level_bytes.get("l2")
    elif key == "dram" and m.over_fetch_ratio:
        moved = m.over_fetch_ratio * need
    if not moved or moved <= need:
        return 1.0
    stays = need / moved
    return stays + (1.0 - stays) * keep


def fence_share(m: Metrics, lim) -> tuple[float, float] | None:
    """What-if for memory fences around atomics (``sem='acq_rel'``, Triton's default for ``tl.atomic_add``;
    ``seq_cst``; ``__threadfence``): each orders the thread's earlier accesses before it and later ones
    after it, so the warp waits a memory round trip per fenced atomic — Nsight Compute's ``membar`` stall
    (its WarpStateStats rule: avoid unnecessary memory barriers). Where the values are read only after the
    kernel, relaxed ordering needs no fence: the fences' share f of the warps' time goes, and the
    instruction work stays (the issue slots and pipes bound it), the fences' own memory traffic going with
    them: T'/T = max(1 − f, the largest pipe or issue use). Gate: f ≥ :data:`FENCE_MIN_SHARE`.
    → (share 1 − T'/T, f); None when it does not apply."""
    a = m.accounting
    f = a.share("membar") if a is not None else 0.0
    if f < FENCE_MIN_SHARE or lim is None:
        return None
    return waiting_goes(lim, f), f


def top_stalls(m: Metrics) -> tuple[tuple[str, float], ...]:
    """For generic advice, the evidence that would decide it: the (at most two) warp states that own
    the time (annotation/ncu), as (reason, share)."""
    a = m.accounting
    if a is None or not a.stalls:
        return ()
    return tuple((st.reason, st.share) for st in a.stalls[:2])


def accounting_causes(m: Metrics, bottleneck: str, lim=None) -> list[tuple[str, float, dict]]:
    """(cause, share, facts) of each catalogue cause the accounting proves (``lim``: the stage's limiter,
    computed here when not given).

    * **contended atomics** (``atomics``): global atomics/reductions are ≥ 1 % of the global
      sectors, neither DRAM nor the SMs are busy (< 60 %) and warps wait on memory or each other
      for ≥ 50 % of their time: the atomics' serialisation owns that waiting, less the fences' (``membar``:
      a warp waiting for its own earlier accesses to complete, contended or not: :func:`fence_share`'s), and
      the what-if takes it away with the instruction work staying (:func:`~.limiter.waiting_goes`). Where the
      L2's atomic units were measured per slice, only atomics concentrated on a few slices are contended,
      and where their slice is the limiter the hot slice's what-if decides:
    * **a hot L2 slice** (``atomics`` or ``over_fetch`` at the L2): the busiest slice is the limiter,
      its excess over the average slice the time spreading the traffic removes (:mod:`.slices`).
    * **low reuse from small tiles** (``small_tiles``): tensor-core work with the tensor pipe under
      60 %, memory-wait ≥ 50 %, and global load bytes per FLOP b at least twice what
      REUSE_TILE×REUSE_TILE tiles need (s/128 for s-byte elements): the time follows the operand
      traffic, which larger tiles cut to ρ = (s/128)/b → share 1 − ρ.
    * **shared-memory bank conflicts** (``bank_conflicts``): ≥ 0.25 conflicts per shared
      wavefront with ≥ 20 % of the time waiting on shared memory: the conflicted wavefronts' part
      of that wait → share = shared-wait × conflicts/wavefront.

    Every share is then capped by the attainable headroom (the kernel cannot beat its roof at the
    throughput tuned kernels reach) like the speed-of-light cap on every estimate."""
    a = m.accounting
    if a is None or not a.measured:
        return []
    cap = m.attainable_headroom
    cap = METRICS_ONLY_MAX_SHARE if cap is None else cap
    out: list[tuple[str, float, dict]] = []
    compute, _ = compute_utilisation(m)
    tc = m.tc_pct or 0.0
    # A dot on the FMA pipes (issue 26's ``fma_dot``) is the machine model's move of the FMA pipe's work
    # to the tensor cores now (limiter.what_if_moves), estimated from the pipes' rates.
    share = a.atomic_sector_share
    busy = max(m.dram_pct or 0.0, compute or 0.0)
    lim = lim or limiter(m)
    if (hot := slices.hot_slice(m, lim)) is not None:
        out.append((hot[0], min(hot[1], cap), hot[2]))
    if (cas := cas_loop_share(m, lim)) is not None:  # a CAS loop's retries and returns (.locks)
        out.append(
            ("atomics", min(cas[0], cap), {"move": "cas_loop", "memory_wait": cas[1], "value": cas[2]})
        )
    if (
        cas is None
        and share is not None
        and share >= ATOMIC_MIN_SECTOR_SHARE
        and busy < m.scattered_dram_pct
        and a.memory_wait >= MEMORY_WAIT_MIN_SHARE
        # where the slices were measured: atomics on a few of them, whose slice is not the bound (that is
        # the hot slice's what-if)
        and slices.contended(m) is not False
        and not (hot is not None and hot[0] == "atomics")
    ):
        out.append(
            (
                "atomics",
                min(waiting_goes(lim, a.unfenced_wait), cap),
                {
                    "atomic_l2_sectors": a.atomic_l2_sectors,
                    "atomic_share": share,
                    "memory_wait": a.memory_wait,
                },
            )
        )
    if (lock := lock_share(m, lim)) is not None:  # a contended spin lock (.locks): its waiting, not latency
        out.append(("atomics", min(lock[0], cap), {"move": "lock", "memory_wait": lock[1], "value": lock[2]}))
    elif (
        share is not None and share >= ATOMIC_MIN_SECTOR_SHARE and (fenced := fence_share(m, lim)) is not None
    ):
        out.append(("atomics", min(fenced[0], cap), {"atomic_share": share, "fence_wait": fenced[1]}))
    if (
        m.tensor_work
        and a.tensor_inst
        and tc < TC_HEALTHY_PCT
        and a.memory_wait >= MEMORY_WAIT_MIN_SHARE
        and a.ld_sectors
        and m.flops
        and m.elem_bytes
    ):
        bpf = 32.0 * a.ld_sectors / m.flops
        target = m.elem_bytes / REUSE_TILE
        if bpf >= 2.0 * target:
            out.append(
                (
                    "small_tiles",
                    min(1.0 - target / bpf, cap),
                    {
                        "bytes_per_flop": bpf,
                        "tile": m.elem_bytes / bpf,
                        "reuse_tile": REUSE_TILE,
                        "target_bytes_per_flop": target,
                        "tc_pct": tc,
                        "memory_wait": a.memory_wait,
                    },
                )
            )
    conflicts = a.bank_conflicts_per_wavefront
    if (
        conflicts is not None
        and conflicts >= BANK_CONFLICT_MIN_PER_WAVEFRONT
        and a.shared_wait >= SHARED_WAIT_MIN_SHARE
    ):
        out.append(
            (
                "bank_conflicts",
                min(a.shared_wait * min(1.0, conflicts), cap),
                {"conflicts_per_wavefront": conflicts, "shared_wait": a.shared_wait},
            )
        )
    div, issue = a.divergence, a.issue_active_pct
    if div is not None and div >= DIVERGENCE_MIN and issue is not None and issue >= DIVERGENCE_MIN_ISSUE_PCT:
        # Issue-bound with idle lanes: the same work with full warps needs (1 - d) of the issue slots.
        out.append(
            (
                "divergence",
                min(div * issue / 100.0, cap),
                {"threads_per_inst": a.threads_per_inst, "issue_active_pct": issue},
            )
        )
    return out
