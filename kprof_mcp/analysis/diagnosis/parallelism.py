"""Parallelism what-ifs (issue 36): Little's law. A latency-bound kernel's throughput follows the warps
it keeps in flight, so with W' warps in flight instead of W its time becomes T·W/W' — never below the
busiest resource's work at the rate tuned kernels reach (90 % of DRAM, 95 % of a pipe), nor the launch
floor. Two changes add warps: filling every SM (too few blocks) and lifting what limits occupancy
(registers, shared memory, warps or blocks per SM) to the next limit. Pure: numbers in, a share out."""

from __future__ import annotations

import math

from .catalogue import MEMORY_WAIT_MIN_SHARE
from .limiter import ATTAINABLE, ATTAINABLE_PIPE, NEAR_PEAK, Limiter, _active_frac, stages_a_dot


def work_floor(m, lim: Limiter) -> float:
    """The least time the stage's present work takes (ns): its busiest resource's use at the rate tuned kernels
    reach on it, and the launch floor. A what-if that keeps the work (more blocks, hidden latency) stops there."""
    T = m.time_ns
    work = max((u.util * T / ATTAINABLE.get(u.key, ATTAINABLE_PIPE) for u in lim.uses), default=0.0)
    return max(work, m.floor_ns or 0.0)


def fill_share(m, lim: Limiter | None) -> float | None:
    """Too few blocks (grid < SMs): the share of the time that filling every SM at the launch's
    theoretical occupancy removes, by Little's law, floored at the busiest resource's work at the rate
    tuned kernels reach. None when the occupancy figures are missing (the caller falls back to the
    SMs' idle share)."""
    if lim is None or not m.grid_blocks or not m.sm_count or m.grid_blocks >= m.sm_count:
        return None
    if m.occupancy_pct is None or not m.theoretical_occupancy_pct or not m.time_ns:
        return None
    frac = _active_frac(m)
    w_now = m.occupancy_pct / 100.0 * frac
    w_new = m.theoretical_occupancy_pct / 100.0
    if w_now <= 0 or w_new <= w_now:
        return None
    T = m.time_ns
    return max(0.0, 1.0 - max(T * w_now / w_new, work_floor(m, lim)) / T)


def waves_share(m, lim: Limiter | None) -> float:
    """Fewer blocks than the SMs' block slots (Nsight Compute's waves per SM under one, the grid not known):
    the slots' idle share, floored at the busiest resource's work at the rate tuned kernels reach (the same
    work spread over more blocks is no faster than that: 2026-11-29, an integer command stage at 0.48 waves
    with its issue slots 87.8 % busy was told +106 % from more blocks)."""
    share = 1.0 - m.waves_per_sm
    if lim is None or not m.time_ns:
        return share
    return max(0.0, min(share, 1.0 - work_floor(m, lim) / m.time_ns))


def occupancy_share(m, lim: Limiter | None) -> float | None:
    """Low occupancy while latency-bound: the share of the time that lifting the resource that limits
    occupancy (the launch statistics' blocks per SM by registers, shared memory, warps, blocks) to the next
    limit removes, by Little's law: achieved occupancy grows with the blocks an SM can hold, at most to
    every warp slot and to the blocks the grid has per SM. None without the launch statistics."""
    a = m.accounting
    if lim is None or a is None or not a.occupancy_limits or not m.occupancy_pct or not m.time_ns:
        return None
    limits = a.occupancy_limits
    name = min(limits, key=lambda k: limits[k])
    now = limits[name]
    others = [v for k, v in limits.items() if k != name]
    if not now or not others or min(others) <= now:
        return None
    ratio = min(others) / now
    if m.grid_blocks and m.sm_count:
        ratio = min(ratio, max(1.0, m.grid_blocks / m.sm_count / now))
    w_now = m.occupancy_pct / 100.0
    w_new = min(1.0, w_now * ratio)
    if w_new <= w_now:
        return None
    T = m.time_ns
    return max(0.0, 1.0 - max(T * w_now / w_new, work_floor(m, lim)) / T)


def tail_share(m, lim: Limiter | None) -> float | None:
    """A last partial wave (Nsight Compute's waves per SM w, 1 ≤ w < the tail bound): spread evenly, the
    blocks take w/⌈w⌉ of the rounds — T' = max(T × w/⌈w⌉, the busiest resource's work at the rate tuned
    kernels reach, floor). A kernel already near a resource's peak through its last wave cannot gain the
    idle slots' time (the 21st held-back set's Gaussians: 1.29 waves at 75 % of the issue slots). None
    without measured waves."""
    if not m.waves_measured or m.waves_per_sm is None or m.waves_per_sm < 1.0 or not m.time_ns:
        return None
    T, w = m.time_ns, m.waves_per_sm
    floor = work_floor(m, lim) if lim is not None else (m.floor_ns or 0.0)
    return max(0.0, 1.0 - max(T * w / math.ceil(w), floor) / T)


def balance_share(m, lim: Limiter | None) -> float | None:
    """Work unbalanced across the SMs (a grid of at least one full wave whose SMs were active under
    :data:`~.limiter.NEAR_PEAK` of the elapsed time, measured: a few long programs run on while the
    others are done): spread over every SM the same work takes the SMs' active share of the time —
    T' = max(T × active share, the busiest resource's work at the rate tuned kernels reach, floor).
    None without the measured active share, or with too few blocks (:func:`fill_share`'s case)."""
    a = m.accounting
    frac = a.sm_active_frac if a is not None else None
    if lim is None or not frac or not m.time_ns or not m.grid_blocks or not m.sm_count:
        return None
    if m.grid_blocks < m.sm_count or frac >= NEAR_PEAK:
        return None
    T = m.time_ns
    return max(0.0, 1.0 - max(T * min(1.0, frac), work_floor(m, lim)) / T)


# A warp's global load request at 16 bytes per thread (LDG.128) touches 16 sectors of 32 bytes: the most
# bytes one load instruction can bring in.
FULL_REQUEST_SECTORS = 16.0


# The resources whose work follows the loop's steps and load instructions, not the bytes or the elements:
# requests, L1 wavefronts, issue slots, the loop's address arithmetic and its per-step shared-memory traffic
# (a block reduction, a layout change). DRAM's, L2's and the math pipes' work per byte or element stays.
PER_STEP = ("issue", "lsu", "l1", "alu", "shared")


def _loop_without_dot(m) -> bool:
    """The stage's hot loop loads from global memory and stages nothing for a dot: its SASS loop mix has
    global loads and no tensor-core instructions, so the loop's shared-memory traffic is its own per-step
    work (a block reduction, a layout change), not a dot's staged operands."""
    mix = m.listing.loops if m.listing is not None else None
    return bool(mix) and mix.get("global_load", 0) > 0 and not stages_a_dot(m)


def wider_loads_share(m, lim: Limiter | None, latency: bool = True) -> tuple[float, float] | None:
    """Narrow loads: the global load requests touch s < 8 sectors each — each thread loads under 8
    contiguous bytes (a contiguous warp request of w bytes per thread touches w sectors; misaligned rows or
    scalar code keep Triton and the compiler from 16-byte loads) — and DRAM moves about the model's bytes
    (no over-fetch: that has its own cause). 16-byte loads (16 sectors a request) bring 16/s times the bytes
    a load instruction, so:

    * in a latency-bound stage (``latency``: warps wait on global memory most, no resource near its peak),
      Little's law: the bytes in flight follow the bytes a load brings, T' = max(T · s / 16, the busiest
      resource's work at the attainable rate, floor);
    * in a stage bound by L1 or the LSU pipe (work per request, per step: :data:`PER_STEP`; not the issue
      slots, which a loop of math fills) whose hot loop loads global data and stages nothing for a dot
      (:func:`_loop_without_dot`),
      each step covers 16/s times the data, so the loop runs s/16 of its steps: those resources' work
      scales by s/16 (the loop's requests, barriers and per-step reduction with it; of the issue slots the
      part that is not the math pipes' per-element instructions) and every other use stays,
      T' = max(T · s / 16, the uses after the change at the attainable rate, floor).

    → (share 1 − T'/T, s). None when it does not apply."""
    a = m.accounting
    if lim is None or a is None or not m.time_ns:
        return None
    s = a.ld_sectors_per_request
    if s is None or s >= FULL_REQUEST_SECTORS / 2 or s <= 0:
        return None
    if m.over_fetch_ratio is not None and m.over_fetch_ratio > 1.25:
        return None
    T, k = m.time_ns, s / FULL_REQUEST_SECTORS
    if not lim.bound and lim.family == "memory" and latency:
        return max(0.0, 1.0 - max(T * k, work_floor(m, lim)) / T), s
    if not lim.bound or lim.resource not in ("l1", "lsu") or not _loop_without_dot(m):
        return None
    # the issue slots' math (FMA, XU, FP64 pipes' instructions: per element) stays, the rest is per step
    pi, n = a.pipe_inst, a.inst_executed
    math = min(1.0, sum(pi.get(p) or 0.0 for p in ("fma", "xu", "fp64")) / n) if n else 1.0
    scale = {**{key: k for key in PER_STEP}, "issue": math + (1.0 - math) * k}
    after = max(
        (u.util * scale.get(u.key, 1.0) * T / ATTAINABLE.get(u.key, ATTAINABLE_PIPE) for u in lim.uses),
        default=0.0,
    )
    return max(0.0, 1.0 - max(T * k, after, m.floor_ns or 0.0) / T), s


def grid_occupancy_share(m, lim: Limiter | None) -> tuple[float, float | None] | None:
    """Occupancy held down by the grid, not by what a block spends: a latency-bound stage whose SMs are
    active most of the time (at least :data:`~.limiter.NEAR_PEAK`: not work unbalanced across the SMs,
    :func:`balance_share`'s case) but hold under NEAR_PEAK of the warps their registers, shared memory and
    slots allow (achieved occupancy w against the theoretical w_t), because the grid gives each SM fewer
    blocks than fit — a grid of one program per SM (a persistent grid sized by the SM count), or too few
    blocks per SM for the limits (grid / SMs under the fewest blocks any limit allows; with too few blocks
    for every SM, :func:`fill_share`'s case). Little's law: with the grid giving every SM the blocks that
    fit, T' = max(T · w / w_t, the busiest resource's work at the attainable rate, floor).
    → (share 1 − T'/T, the grid's blocks per SM or None when the grid is not recorded); None when it does
    not apply."""
    a = m.accounting
    if lim is None or a is None or lim.bound or not m.time_ns or not a.occupancy_limits:
        return None
    w, w_t = m.occupancy_pct, m.theoretical_occupancy_pct
    frac = a.sm_active_frac
    if not w or not w_t or w >= NEAR_PEAK * w_t or frac is None or frac < NEAR_PEAK:
        return None
    per_sm = None
    if m.grid_blocks is not None:
        if not m.sm_count or m.grid_blocks < m.sm_count:
            return None
        per_sm = m.grid_blocks / m.sm_count
        if per_sm >= min(a.occupancy_limits.values()):
            return None  # the grid has the blocks: something else keeps the warps few
    T = m.time_ns
    return max(0.0, 1.0 - max(T * w / w_t, work_floor(m, lim)) / T), per_sm


def chain_share(m, lim: Limiter | None) -> tuple[float, tuple[str, ...]] | None:
    """Chains of dependent memory round trips (the TTIR's ``chase`` ops, :mod:`kprof_mcp.parsers.ttir_chase`:
    a loop whose next load's address, or whose going on, needs the value the last one loaded) in a stage where
    no resource is near its peak and the warps wait on memory or on each other (the memory or sync stall
    family owns the most of their time). Each iteration waits a whole round trip before the next can issue its
    load, so more warps help only as far as there are more chains. Putting the round trips in flight together
    (the addresses or keys known ahead: a table of them, several chains per program, a search of fewer
    dependent steps) takes the waiting away: T' = max(T · (1 − w), the busiest resource's work at the
    attainable rate, floor), w the memory and sync waits' share of the warps' time (Nsight Compute's stall
    reasons). → (share 1 − T'/T, the chains' source lines); None when it does not apply (no TTIR chain, no
    counters, or a bound resource: then that resource is the limit, not the chain)."""
    chains = [op for op in m.ir_ops if op.get("kind") == "chase"]
    a = m.accounting
    if (
        not chains
        or lim is None
        or a is None
        or lim.bound
        or lim.family not in ("memory", "sync")
        or not m.time_ns
    ):
        return None
    T = m.time_ns
    share = max(0.0, 1.0 - max(T * (1.0 - a.memory_wait), work_floor(m, lim)) / T)
    return share, tuple(sorted({str(op.get("line") or "") for op in chains} - {""}))


# A unit a kernel uses under this share of its peak is not working at any rate: "is it there at all".
IDLE_UNIT_PCT = 10.0


def serial_kernel(activity: dict[str, float] | None) -> bool:
    """Whether a kernel, by Nsight Systems' GPU metrics samples over its run (Metrics.top_activity), neither moved
    data nor issued work: DRAM read + write, SM issue and warps in flight each under :data:`IDLE_UNIT_PCT` % of
    their peak. Its time is a chain of dependent steps on a few warps (a serial algorithm, a long tail of
    imbalanced work): no fusion of the kernels around it shortens it, and nothing near a roof bounds it. The
    probe on an H100 (docs/machine-model.md, "Timelines without counters"): PyTorch's sort-based deterministic
    index_add at DRAM 2 %, issue 3 %, warps 3 %; kernels working on intermediates at 19 % DRAM or more, or 29 %
    issue, or 45 % warps. False without samples."""
    if not activity or activity.get("issue_pct") is None or activity.get("warps_pct") is None:
        return False
    dram = (activity.get("dram_read_pct") or 0.0) + (activity.get("dram_write_pct") or 0.0)
    return max(dram, activity["issue_pct"], activity["warps_pct"]) < IDLE_UNIT_PCT


def busiest_unit(activity: dict[str, float] | None) -> str | None:
    """The unit a kernel's work ran on, by Nsight Systems' GPU metrics samples over its run (Metrics.top_activity):
    the busiest of the DRAM (read + write), the warp schedulers' issue slots and the tensor pipe, each % of its
    peak, where it did work at all (at least :data:`IDLE_UNIT_PCT` %). The resource a move of that kernel's work
    takes it from (cause vocabulary: the pipe or level the work runs on now), where a command's kernels have no
    counters: a CUB radix sort sampled at DRAM 60 %, issue 29 %, tensor 0 % runs on the DRAM, whatever the
    stage's model would be bound by. None without samples or with every unit idle."""
    if not activity:
        return None
    use = {
        "dram": (activity.get("dram_read_pct") or 0.0) + (activity.get("dram_write_pct") or 0.0),
        "issue": activity.get("issue_pct") or 0.0,
        "tensor": activity.get("tensor_pct") or 0.0,
    }
    unit = max(use, key=lambda k: use[k])
    return unit if use[unit] >= IDLE_UNIT_PCT else None


# The instruction a library kernel's name says its math runs as (cuBLAS and CUTLASS names: ``..._ffma_...``,
# ``sgemm``), and the pipe that executes it.
NAME_PIPES = (("ffma", "fma"), ("sgemm", "fma"), ("cgemm", "fma"), ("dfma", "fp64"), ("dgemm", "fp64"))


def name_pipe(name: str | None) -> str | None:
    """The CUDA-core pipe a library kernel's name says its math runs on (:data:`NAME_PIPES`), or None: where the GPU
    metrics sample only the issue slots busy (:func:`busiest_unit`), the name says whose instructions fill them
    (the 38th held-back set's 2-D DFT by dense products: cuBLAS's ``..._cf32cf32_..._ffma_...`` complex GEMM)."""
    low = (name or "").lower()
    return next((pipe for token, pipe in NAME_PIPES if token in low), None)


def work_unit(activity: dict[str, float] | None, name: str | None) -> str | None:
    """The unit a command kernel's work runs on: the busiest the GPU metrics sampled (:func:`busiest_unit`), the
    issue slots refined to the pipe the kernel's name says fills them (:func:`name_pipe`)."""
    unit = busiest_unit(activity)
    return (name_pipe(name) or unit) if unit == "issue" else unit


def memory_waits(m) -> bool:
    """Whether a stage's warps wait on memory (its memory and sync waits at least ``MEMORY_WAIT_MIN_SHARE`` of
    their time), or no counters say otherwise (metrics only: its SMs idle is all that is known)."""
    return (
        m.accounting is None or not m.accounting.measured or m.accounting.memory_wait >= MEMORY_WAIT_MIN_SHARE
    )
