"""Pure analysis: health thresholds, bottleneck classification, ranked opportunities.

Everything here is a function of numbers (percentages, bytes, waves); nothing reads a
device, a file or a clock, so every rule is unit-testable and fast (``classify`` runs in
microseconds).

Thresholds and the classification table are SPEC.md's (from the profiling guide):

=================  =========  ==================================================
metric             healthy    if unhealthy
=================  =========  ==================================================
TC util            > 60 %     memory- or latency-bound
DRAM throughput    > 70 %     compute- or latency-bound
occupancy          > 25 %     register / shared-memory pressure
L2 hit rate        > 80 %     poor data reuse (a *locality issue* flag)
local spilling     0 bytes    register overflow
waves / SM         > 1.0      under-filled GPU
DRAM bytes ÷ model ≤ 1.25     over-fetch (uncoalesced/strided access, L2 misses)
=================  =========  ==================================================

The last row is ours, not the guide's: with counters, measured DRAM bytes over the kernel's
byte model exposes traffic the algorithm does not need.

A kernel with no tensor-core work (elementwise, reductions, FP32 SIMT) has TC% = 0 by
construction, so its compute utilisation is taken from SM throughput (``compute_pct``).

Estimated gains come from one time model (:func:`opportunities`): each is the share of the
stage's measured time one change would remove, never more than the gap to the stage's
speed-of-light time. docs/diagnosis-calibration.md compares them with measured fixes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .accounting import Accounting

TC_HEALTHY_PCT = 60.0
DRAM_HEALTHY_PCT = 70.0
OCCUPANCY_HEALTHY_PCT = 25.0
L2_HIT_HEALTHY_PCT = 80.0
WAVES_HEALTHY = 1.0
SPILL_HEALTHY_BYTES = 0
OVER_FETCH_HEALTHY = 1.25

# What "at the roof" means when estimating headroom: a well-tuned memory-bound kernel
# reaches ~90 % of peak DRAM bandwidth; a well-tuned GEMM keeps the tensor pipe ~95 % busy
# (ncu's pipe utilisation, measured on an H100: cuBLAS bf16 4096³ 97 %, our matmul v3 92.6 %;
# matmul v0 at 78.9 % gained 17.6 % when v3 reached 92.6 %, and 1 − 78.9/95 says 20 %).
_DRAM_ATTAINABLE_PCT = 90.0
_COMPUTE_ATTAINABLE_PCT = 95.0
# Without counters (event mode) compute% is achieved FLOP/s over the datasheet peak at boost
# clock, which no kernel sustains: power limits hold an H100's clock down under tensor-core load.
# Our matmul v3 (bf16 4096³, event mode, H100 SXM) ran at 725 TFLOP/s = 73 % of 989.4.
_ROOFLINE_COMPUTE_ATTAINABLE_PCT = 75.0
# DRAM throughput at which scattered (sector-sized) traffic saturates the memory system: on an
# H100 a strided transpose and a random gather both ran at 59-62 % of the datasheet peak while
# their time was all DRAM traffic (removing 6-7x over-fetch made them 8.5-9.5x faster). An
# over-fetching stage at this throughput or more spends all of its time on DRAM traffic.
DRAM_SATURATED_PCT = 60.0
# Without a measured time and a speed-of-light bound (classify_bottleneck on a few metrics), a
# cause is credited at most this share of the time: 95 % → at most 1900 % faster.
METRICS_ONLY_MAX_SHARE = 0.95
TAIL_MAX_WAVES = 4.0
# Below this share an opportunity is not worth an agent's time (and is within timing noise).
MIN_SHARE = 0.01

MEMORY_BOUND = "Memory-bound"
COMPUTE_BOUND = "Compute-bound"
LATENCY_BOUND = "Latency-bound"


@dataclass(frozen=True)
class Metrics:
    """Per-stage utilisation figures. ``None`` means "not measured", never zero."""

    tc_pct: float | None = None
    dram_pct: float | None = None
    occupancy_pct: float | None = None
    l2_hit_pct: float | None = None
    local_spill_bytes: float | None = None
    waves_per_sm: float | None = None
    compute_pct: float | None = None  # SM throughput; the compute figure when TC% is 0 by construction
    over_fetch_ratio: float | None = None  # measured DRAM bytes / model bytes
    # The time model (see :func:`opportunities`). None: not known, and then no bound is applied
    # beyond :data:`METRICS_ONLY_MAX_SHARE`.
    time_ns: float | None = None  # the stage's measured time
    sol_ns: float | None = None  # its speed-of-light time at the clocks it ran at
    grid_blocks: int | None = None  # programs launched (None for persistent grids: fewer is by design)
    sm_count: int | None = None
    waves_measured: bool = False  # waves_per_sm is Nsight Compute's occupancy-aware figure
    local_share: float | None = None  # local-memory (spill) bytes / all L1 traffic bytes
    kernel_busy: float = 1.0  # share of the stage's time its kernels run (a timeline's span has launch gaps)
    # The compute% a tuned kernel reaches: pipe utilisation with counters; % of datasheet peak without.
    compute_attainable_pct: float = _COMPUTE_ATTAINABLE_PCT
    # Where the time went (annotation/ncu: kprof_mcp.analysis.accounting) and what the catalogue's
    # causes weigh it against: the stage's model FLOPs, whether its work suits tensor cores (a dot),
    # its element size, the tensor-core peak at the clock it ran, and the attainable speed-of-light
    # time (the model's bytes at 90 % of peak bandwidth, its FLOPs at 95 % of the peak): what a
    # removed cause can bring the stage down to at best.
    accounting: Accounting | None = None
    kernels: int = 1  # kernels one run (or occurrence) of the stage launches: 2 or more can be fused
    tensor_work: bool = False
    flops: float | None = None
    elem_bytes: float | None = None
    tensor_peak_flops_per_s: float | None = None
    attainable_sol_ns: float | None = None

    @property
    def attainable_headroom(self) -> float | None:
        """The share of the time a fix of one cause can remove at most: 1 − T_attainable / T (never
        more than the speed-of-light headroom)."""
        h = self.headroom
        if h is None or self.attainable_sol_ns is None or not self.time_ns:
            return h
        return max(0.0, min(h, 1.0 - self.attainable_sol_ns / self.time_ns))

    @property
    def headroom(self) -> float | None:
        """The largest share of the measured time any change could remove: 1 − T_sol / T."""
        if self.time_ns is None or self.sol_ns is None or self.time_ns <= 0:
            return None
        return max(0.0, 1.0 - self.sol_ns / self.time_ns)


@dataclass(frozen=True)
class Opportunity:
    name: str
    est_gain_pct: float
    trigger: str  # "metric=value"
    hint: str = ""
    cause: str = ""  # what it is about: spills, few_blocks, tail, over_fetch, launch, streams, dram_roof,
    #                  compute_roof, latency, occupancy, ncu
    share: float = 0.0  # the share of the stage's time it would remove (gain = 1/(1 − share) − 1)
    specific: bool = True  # a cause the counters pin down (False: generic advice, credited only what is left)


@dataclass(frozen=True)
class Diagnosis:
    bottleneck: str
    locality_issue: bool
    unhealthy: tuple[str, ...]
    opportunities: tuple[Opportunity, ...]
    compute_source: str  # "tc_pct", "compute_pct" or "none"
    root_cause: str
    notes: tuple[str, ...] = field(default_factory=tuple)


def _fmt(v: float) -> str:
    return f"{v:.1f}" if abs(v) < 1e5 else f"{v:.3g}"


def compute_utilisation(m: Metrics) -> tuple[float | None, str]:
    """The compute figure to classify with, and where it came from.

    TC% when the kernel uses the tensor pipe; SM throughput when TC% is absent or ~0
    (kernels with no tensor-core work would otherwise all look latency-bound).
    """
    if m.tc_pct is not None and m.tc_pct >= 1.0:
        return m.tc_pct, "tc_pct"
    if m.compute_pct is not None:
        return m.compute_pct, "compute_pct"
    if m.tc_pct is not None:
        return m.tc_pct, "tc_pct"
    return None, "none"


def unhealthy_metrics(m: Metrics) -> list[str]:
    """``metric=value`` for each measured metric outside its healthy range."""
    out: list[str] = []
    compute, source = compute_utilisation(m)
    if compute is not None and compute <= TC_HEALTHY_PCT:
        out.append(f"{source}={_fmt(compute)}")
    if m.dram_pct is not None and m.dram_pct <= DRAM_HEALTHY_PCT:
        out.append(f"dram_pct={_fmt(m.dram_pct)}")
    if m.occupancy_pct is not None and m.occupancy_pct <= OCCUPANCY_HEALTHY_PCT:
        out.append(f"occupancy_pct={_fmt(m.occupancy_pct)}")
    if m.l2_hit_pct is not None and m.l2_hit_pct < L2_HIT_HEALTHY_PCT:
        out.append(f"l2_hit_pct={_fmt(m.l2_hit_pct)}")
    if m.local_spill_bytes is not None and m.local_spill_bytes > SPILL_HEALTHY_BYTES:
        out.append(f"local_spill_bytes={int(m.local_spill_bytes)}")
    if m.waves_per_sm is not None and m.waves_per_sm <= WAVES_HEALTHY:
        out.append(f"waves_per_sm={m.waves_per_sm:.2f}")
    if m.over_fetch_ratio is not None and m.over_fetch_ratio > OVER_FETCH_HEALTHY:
        out.append(f"dram_bytes/model={m.over_fetch_ratio:.2f}")
    return out


def classify(m: Metrics) -> str:
    """SPEC.md's table: DRAM high & compute low → memory; compute high & DRAM low → compute;
    both low → latency. When both are high, the one closer to its roof wins."""
    compute, _ = compute_utilisation(m)
    dram = m.dram_pct
    compute_high = compute is not None and compute > TC_HEALTHY_PCT
    dram_high = dram is not None and dram > DRAM_HEALTHY_PCT
    if dram_high and not compute_high:
        return MEMORY_BOUND
    if compute_high and not dram_high:
        return COMPUTE_BOUND
    if compute_high and dram_high:
        assert compute is not None and dram is not None
        return MEMORY_BOUND if dram / DRAM_HEALTHY_PCT >= compute / TC_HEALTHY_PCT else COMPUTE_BOUND
    return LATENCY_BOUND


def gain_pct(share: float) -> float:
    """% faster when ``share`` of a stage's time disappears: 1/(1 − share) − 1."""
    share = min(max(share, 0.0), 0.999)
    return (1.0 / (1.0 - share) - 1.0) * 100.0


def _share_of_gap(current_pct: float, target_pct: float) -> float:
    """Share of the time removed if a throughput at ``current_pct`` of peak rose to ``target_pct``
    with the same work: 1 − current/target."""
    if target_pct <= 0:
        return 0.0
    return max(0.0, 1.0 - max(current_pct, 0.0) / target_pct)


def opportunities(m: Metrics, bottleneck: str | None = None) -> list[Opportunity]:
    """Every opportunity the metrics support, ranked by estimated gain (largest first).

    **One time model.** Every estimate is a *share of the stage's measured time* T that one
    change would remove; the gain is 1/(1 − share) − 1. Each share is capped by the stage's
    headroom h = 1 − T_sol/T, where T_sol = max(FLOPs / peak FLOP/s, model bytes / peak bytes/s)
    at the clocks the stage ran at, so no opportunity claims more than T/T_sol − 1. Shares of
    different causes may overlap (a spill is also memory traffic), so they are alternatives, not
    additive. Generic advice (reach the roof, hide latency, occupancy) is credited only with the
    headroom the specific causes leave unexplained, so a cause the counters pin down outranks
    advice that would apply to any slow kernel. Without T and T_sol (``classify_bottleneck`` on a
    few metrics) shares are capped at :data:`METRICS_ONLY_MAX_SHARE`.

    Kernel-level shares apply to the time kernels run: a timeline's stage span also holds launch
    gaps, so there every share is scaled by the kernels' busy share of the span.

    Specific causes (share of T):

    * too few blocks (grid < SMs, not a persistent grid): only grid/SMs of the SMs work →
      1 − grid/SMs. With only ncu's occupancy-aware waves w < 1 known: 1 − w (an upper bound).
    * tail effect (ncu waves 1 ≤ w < 4 with a partial last wave): the last wave's idle SMs cost
      ceil(w) − w waves of ceil(w) → 1 − w/ceil(w) (uniform block times assumed; with more
      waves the blocks' own spread hides most of the tail).
    * register spills: local-memory bytes as a share of all L1 traffic (time of a memory- or
      latency-bound stage follows its memory traffic). With no traffic counters (event mode:
      only the compiler's spill count) 10 % plus 5 % per doubling over 128 bytes.
    * DRAM over-fetch (measured DRAM bytes ÷ model bytes r > 1.25, not compute-bound): the
      removable traffic share 1 − 1/r, of the time DRAM is busy: all of it when memory-bound or
      at :data:`DRAM_SATURATED_PCT` (60 %) of peak or more (scattered sector traffic saturates
      DRAM there: an H100 strided transpose at 62 % with r = 7.0 says +600 %, its fix measured
      +846 %), dram%/60 of it below (MLA decode at DRAM 17.5 % and r = 3.9 says 28 %;
      removing most of its over-fetch gained 2.4 %: low-throughput stages are bounded by
      something else). A low L2 hit rate with r ≤ 1.25 is compulsory misses (streaming) and
      raises nothing.

    Generic advice (share of what the specific causes leave):

    * memory-bound below 90 % of peak DRAM bandwidth: 1 − dram/90.
    * compute-bound below what tuned kernels reach: 1 − compute/95 for Nsight Compute's pipe
      utilisation, 1 − compute/75 for % of the datasheet peak estimated without counters.
    * latency-bound: the unexplained headroom h − max(specific shares) (metrics only: the gap
      of the busier unit to its healthy level).
    * occupancy below 25 % while latency-bound: half of the latency share.
    """
    bottleneck = bottleneck or classify(m)
    compute, source = compute_utilisation(m)
    h = m.headroom
    cap = METRICS_ONLY_MAX_SHARE if h is None else h
    specific: list[Opportunity] = []

    def add(
        into: list[Opportunity], name: str, share: float, trigger: str, hint: str, cause: str, spec: bool
    ) -> None:
        # Kernel-level causes act only while kernels run: in a timeline's span, not in its gaps.
        share = min(share * m.kernel_busy, cap)
        if share >= MIN_SHARE:
            into.append(Opportunity(name, gain_pct(share), trigger, hint, cause, share, spec))

    if m.grid_blocks is not None and m.sm_count and m.grid_blocks < m.sm_count:
        add(
            specific,
            "Fill the GPU: launch more blocks than SMs (split the work: smaller tiles, split K/KV)",
            1.0 - m.grid_blocks / m.sm_count,
            f"grid_blocks={m.grid_blocks} (< {m.sm_count} SMs)",
            "idle SMs",
            "few_blocks",
            True,
        )
    elif m.grid_blocks is None and m.waves_per_sm is not None and m.waves_per_sm < WAVES_HEALTHY:
        add(
            specific,
            "Fill the GPU: launch more blocks (split K/KV, smaller tiles)",
            1.0 - m.waves_per_sm,
            f"waves_per_sm={m.waves_per_sm:.2f}",
            "fewer blocks than SMs can hold",
            "few_blocks",
            True,
        )
    if m.waves_measured and m.waves_per_sm is not None and 1.0 <= m.waves_per_sm < TAIL_MAX_WAVES:
        w = m.waves_per_sm
        tail = 1.0 - w / math.ceil(w)
        add(
            specific,
            "Even out the last wave (grid a multiple of the SMs x blocks per SM, or a persistent grid)",
            tail,
            f"waves_per_sm={w:.2f}",
            "the last wave leaves SMs idle",
            "tail",
            True,
        )
    if m.local_spill_bytes is not None and m.local_spill_bytes > SPILL_HEALTHY_BYTES:
        if m.local_share is not None:
            share, trigger = m.local_share, f"local_bytes_share={100 * m.local_share:.1f}%"
        else:
            share = 0.10 + 0.05 * max(0.0, math.log2(max(m.local_spill_bytes, 1.0) / 128.0))
            trigger = f"local_spill_bytes={int(m.local_spill_bytes)}"
        add(
            specific,
            "Remove register spills (smaller tiles, fewer accumulators, more warps, lower num_stages)",
            share,
            trigger,
            "register overflow to local memory",
            "spills",
            True,
        )
    if (
        m.over_fetch_ratio is not None
        and m.over_fetch_ratio > OVER_FETCH_HEALTHY
        and bottleneck != COMPUTE_BOUND
    ):
        removable = 1.0 - 1.0 / m.over_fetch_ratio
        busy = (
            1.0
            if bottleneck == MEMORY_BOUND or m.dram_pct is None
            else min(1.0, m.dram_pct / DRAM_SATURATED_PCT)
        )
        l2 = f", L2 hit {_fmt(m.l2_hit_pct)}%" if m.l2_hit_pct is not None else ""
        if m.kernels >= 2:
            # Several kernels moving N x the bytes the stage needs: each writes its intermediate to DRAM
            # and the next reads it back. Fusing them is what removes that traffic.
            add(
                specific,
                f"Fuse the {m.kernels} kernels of this stage into one (torch.compile, or one Triton "
                "kernel): together they move the stage's bytes several times over",
                removable * busy,
                f"kernels={m.kernels}, dram_bytes/model={m.over_fetch_ratio:.2f}",
                f"unfused kernels write and re-read intermediates in DRAM{l2}",
                "fusion",
                True,
            )
        else:
            add(
                specific,
                "Cut DRAM traffic above the model (coalesced/vectorised access, reuse through shared "
                "memory or L2: grouped launch order, larger tiles)",
                removable * busy,
                f"dram_bytes/model={m.over_fetch_ratio:.2f}{_coalescing_evidence(m)}",
                f"more DRAM traffic than the algorithm needs{l2}",
                "over_fetch",
                True,
            )

    if (
        m.kernels >= 2
        and m.over_fetch_ratio is None
        and m.accounting is None
        and m.attainable_sol_ns
        and m.time_ns
        and m.dram_pct is not None
        and m.dram_pct >= (compute or 0.0)
    ):
        # No counters (event mode, a timeline): a memory-bound stage of several kernels whose time is
        # N x what its model's bytes take at the attainable bandwidth. Each unfused kernel writes its
        # intermediate and the next reads it back; one kernel would move the model's bytes once.
        over = m.time_ns / m.attainable_sol_ns
        if over > OVER_FETCH_HEALTHY:
            add(
                specific,
                f"Fuse the {m.kernels} kernels of this stage into one (torch.compile, or one Triton "
                "kernel): their time is several times what the stage's bytes take at the bandwidth roof",
                1.0 - 1.0 / over,
                f"kernels={m.kernels}, time/bytes_at_roof={over:.2f} (no counters: from kernel times)",
                "unfused memory-bound kernels move intermediates through DRAM",
                "fusion",
                True,
            )
    for name, share, trigger, hint, cause in accounting_causes(m, bottleneck):
        add(specific, name, share, trigger, hint, cause, True)

    explained = max((o.share for o in specific), default=0.0)
    generic: list[Opportunity] = []
    if bottleneck == MEMORY_BOUND and m.dram_pct is not None:
        add(
            generic,
            "Reach peak DRAM bandwidth (wider vector loads, more loads in flight, TMA)",
            _share_of_gap(m.dram_pct, _DRAM_ATTAINABLE_PCT)
            if h is None
            else min(_share_of_gap(m.dram_pct, _DRAM_ATTAINABLE_PCT), max(0.0, h - explained)),
            f"dram_pct={_fmt(m.dram_pct)}",
            "memory-bound: the bandwidth is the limit",
            "dram_roof",
            False,
        )
    if bottleneck == COMPUTE_BOUND and compute is not None:
        add(
            generic,
            "Raise tensor-core efficiency (tile sizes, pipelining stages, warp specialisation)"
            if source == "tc_pct"
            else "Raise SM instruction efficiency (fewer instructions per byte, vectorise)",
            _share_of_gap(compute, m.compute_attainable_pct)
            if h is None
            else min(_share_of_gap(compute, m.compute_attainable_pct), max(0.0, h - explained)),
            f"{source}={_fmt(compute)}",
            "compute-bound: the math units are the limit",
            "compute_roof",
            False,
        )
    if bottleneck == LATENCY_BOUND:
        best = max([v for v in (m.dram_pct, compute) if v is not None], default=None)
        target = DRAM_HEALTHY_PCT if (m.dram_pct or 0) >= (compute or 0) else TC_HEALTHY_PCT
        which = "dram_pct" if target == DRAM_HEALTHY_PCT else source
        if h is not None:
            latency = max(0.0, h - explained)
        elif best is not None:
            latency = max(0.0, _share_of_gap(best, target) - explained)
        else:
            latency = 0.0
        if best is not None or h is not None:
            top = m.accounting.stalls[0].reason if m.accounting is not None and m.accounting.stalls else None
            add(
                generic,
                "Hide memory latency: more loads in flight (num_stages ≥ 3 to pipeline the loads, more "
                "elements per program, more programs)"
                if top in MEMORY_LATENCY_STALLS
                else "Expose more parallelism to hide latency (more loads in flight, more blocks, fewer syncs)",
                latency,
                (f"{which}={_fmt(best)}" if best is not None else "latency-bound") + _stall_evidence(m),
                "latency-bound: neither memory nor math is busy",
                "latency",
                False,
            )
        if m.occupancy_pct is not None and m.occupancy_pct < OCCUPANCY_HEALTHY_PCT:
            name, why = _occupancy_advice(m)
            add(
                generic,
                name,
                0.5 * latency,
                f"occupancy_pct={_fmt(m.occupancy_pct)}{why}",
                "too few warps to hide latency",
                "occupancy",
                False,
            )
    out = specific + generic
    # Largest gain first; on a tie a specific cause before generic advice.
    out.sort(key=lambda o: (round(o.est_gain_pct, 1), o.specific), reverse=True)
    return out


# Issue 26's catalogue: causes named from the hardware's accounting (stall reasons, pipes,
# instruction mix, atomics, shared-memory conflicts), each with the evidence that proves it and the
# share of the time that evidence says it owns. No constant here was fitted on the calibration
# pairs: the thresholds are gates ("is it there at all"), the shares come from the counters.
FMA_DOT_MIN_PIPE_PCT = 30.0  # the FMA pipe busy enough for the dot to be what it runs
MEMORY_WAIT_MIN_SHARE = 0.5  # warps waiting on memory/each other own most of the time
ATOMIC_MIN_SECTOR_SHARE = 0.01  # atomics are a visible part of the global traffic
BANK_CONFLICT_MIN_PER_WAVEFRONT = 0.25
SHARED_WAIT_MIN_SHARE = 0.2
MEMORY_LATENCY_STALLS = ("long_scoreboard", "lg_throttle", "tex_throttle")  # warps waiting on global memory
DIVERGENCE_MIN = 0.25  # a quarter of the lanes idle in the average warp instruction
DIVERGENCE_MIN_ISSUE_PCT = 50.0  # the SMs issue often enough for lost lanes to cost time
REUSE_TILE = 128  # the tile edge (BLOCK_M = BLOCK_N) a tuned GEMM-like kernel reaches on Hopper


UNCOALESCED_SECTORS_PER_REQUEST = 24.0  # 32 is one 32-byte sector per thread: nearly every access its own


def _coalescing_evidence(m: Metrics) -> str:
    """For over-fetch, what the accounting says about why: global accesses whose requests touch
    nearly a sector per thread (uncoalesced), or not."""
    a = m.accounting
    if a is None:
        return ""
    worst = [
        (k, v)
        for k, v in (("loads", a.ld_sectors_per_request), ("stores", a.st_sectors_per_request))
        if v is not None and v >= UNCOALESCED_SECTORS_PER_REQUEST
    ]
    if not worst:
        return ""
    return "; uncoalesced " + ", ".join(f"{k} ({v:.1f} sectors/request)" for k, v in worst)


def _stall_evidence(m: Metrics) -> str:
    """For generic advice, the evidence that would decide it: the warp states that own the time
    (annotation/ncu), or where to get them."""
    a = m.accounting
    if a is None or not a.stalls:
        return ""
    top = ", ".join(f"{st.reason} {100 * st.share:.0f}%" for st in a.stalls[:2])
    return f"; warp time: {top}"


def accounting_causes(m: Metrics, bottleneck: str) -> list[tuple[str, float, str, str, str]]:
    """(name, share, trigger, hint, cause) of each catalogue cause the accounting proves.

    * **tensor cores idle on dot-heavy work** (``fma_dot``): the stage's work suits tensor cores
      (its model says so), Nsight Compute counts FFMAs for at least half its FLOPs, the tensor pipe
      is idle (< 5 %) and the FMA pipe busy (≥ 30 %). The FMA pipe owns u = its utilisation of
      the time; on tensor cores that math runs k times faster, k = the tensor-core peak at this
      clock ÷ the FMA peak the counters imply (FFMA/s ÷ u) → share u·(1 − 1/k).
    * **contended atomics** (``atomics``): global atomics/reductions are ≥ 1 % of the global
      sectors, neither DRAM nor the SMs are busy (< 60 %) and warps wait on memory or each other
      for ≥ 50 % of their time: the atomics' serialisation owns that waiting → share = the
      memory-wait share.
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
    out: list[tuple[str, float, str, str, str]] = []
    compute, _ = compute_utilisation(m)
    tc = m.tc_pct or 0.0
    fma = a.pipes.get("fma")
    if (
        m.tensor_work
        and m.flops
        and a.ffma_thread_inst
        and fma is not None
        and fma >= FMA_DOT_MIN_PIPE_PCT
        and tc < 5.0
        and 2.0 * a.ffma_thread_inst >= 0.5 * m.flops
        and m.time_ns
        and m.tensor_peak_flops_per_s
    ):
        u = fma / 100.0
        fma_peak = 2.0 * a.ffma_thread_inst / (m.time_ns * 1e-9) / u
        k = max(1.0, m.tensor_peak_flops_per_s / fma_peak)
        out.append(
            (
                "Run the dot on tensor cores: tl.dot(..., input_precision=\"tf32\") for fp32 inputs (or bf16/"
                "fp16 operands); in PyTorch allow TF32 (torch.backends.cuda.matmul.allow_tf32) or use bf16",
                min(u * (1.0 - 1.0 / k), cap),
                f"pipe_fma={_fmt(fma)}%, tc_pct={_fmt(tc)}%, FFMA FLOPs/model={2 * a.ffma_thread_inst / m.flops:.2f}",
                f"the matmul runs on the FMA pipes; tensor cores are {k:.1f}x faster here",
                "fma_dot",
            )
        )
    share = a.atomic_sector_share
    busy = max(m.dram_pct or 0.0, compute or 0.0)
    if (
        share is not None
        and share >= ATOMIC_MIN_SECTOR_SHARE
        and busy < DRAM_SATURATED_PCT
        and a.memory_wait >= MEMORY_WAIT_MIN_SHARE
    ):
        out.append(
            (
                "Cut contended global atomics: reduce within each block first (tl.sum, tl.histogram, a "
                "shared-memory accumulator), then one atomic per block and address",
                min(a.memory_wait, cap),
                f"atomic L2 sectors={a.atomic_l2_sectors:.3g} ({100 * share:.1f}% of global sectors), "
                f"memory/sync waits {100 * a.memory_wait:.0f}% of warp time",
                "warps wait on serialised atomics to the same addresses",
                "atomics",
            )
        )
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
                    f"Raise reuse per operand byte: larger tiles (BLOCK_M = BLOCK_N ≥ {REUSE_TILE}, BLOCK_K 64), "
                    "num_warps=8, num_stages=3 (or a grouped/persistent order)",
                    min(1.0 - target / bpf, cap),
                    f"load bytes/FLOP={bpf:.3g} (~{m.elem_bytes / bpf:.0f}-wide tiles; {REUSE_TILE}-wide need "
                    f"{target:.3g}), tc_pct={_fmt(tc)}%, memory waits {100 * a.memory_wait:.0f}%",
                    "each operand byte feeds few FLOPs: the tensor pipe starves on loads",
                    "small_tiles",
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
                "Remove shared-memory bank conflicts (a conflict-free layout: tl.trans/reshape rather than a "
                "gather with a 32-word stride; pad rows by one element)",
                min(a.shared_wait * min(1.0, conflicts), cap),
                f"bank conflicts/wavefront={conflicts:.2f}, shared-memory waits {100 * a.shared_wait:.0f}%",
                "shared-memory accesses replayed for bank conflicts",
                "bank_conflicts",
            )
        )
    div, issue = a.divergence, a.issue_active_pct
    if div is not None and div >= DIVERGENCE_MIN and issue is not None and issue >= DIVERGENCE_MIN_ISSUE_PCT:
        # Issue-bound with idle lanes: the same work with full warps needs (1 - d) of the issue slots.
        out.append(
            (
                "Make branches uniform per warp: sort or bucket the work so a warp's threads take the same path, "
                "select with tl.where instead of branching per thread, or split the kernel by case",
                min(div * issue / 100.0, cap),
                f"threads per warp instruction={a.threads_per_inst:.1f} of 32, issue active {_fmt(issue)}%",
                "divergent warps issue instructions with idle lanes",
                "divergence",
            )
        )
    return out


_LIMITER_FIX = {
    "registers": "fewer registers per thread: smaller tiles or fewer accumulators per program, or fewer values "
    "per thread (more num_warps for the same tile)",
    "shared_mem": "less shared memory per block: fewer num_stages, smaller BLOCK_K or tiles",
    "warps": "smaller blocks (fewer num_warps) so more blocks fit",
    "blocks": "larger blocks (more num_warps, more work per program): the SM's block-slot limit is reached",
}


def _occupancy_advice(m: Metrics) -> tuple[str, str]:
    """The occupancy advice's name and trigger suffix: the resource that limits it when the launch
    statistics say (annotation/ncu), else the generic list."""
    lim = m.accounting.occupancy_limiter if m.accounting is not None else None
    if lim is None:
        return "Raise occupancy (fewer registers or less shared memory per block, smaller tiles)", ""
    name, blocks = lim
    return (
        f"Raise occupancy, limited by {name.replace('_', ' ')} ({blocks:.0f} block(s) per SM): {_LIMITER_FIX[name]}",
        f"; occupancy limited by {name} ({blocks:.0f} blocks/SM)",
    )


def root_cause(m: Metrics, bottleneck: str) -> str:
    """At most two sentences naming the limiting resource and the strongest symptom."""
    compute, source = compute_utilisation(m)
    label = "tensor-pipe" if source == "tc_pct" else "SM"
    parts = []
    if m.dram_pct is not None:
        parts.append(f"DRAM at {_fmt(m.dram_pct)}% of peak")
    if compute is not None:
        parts.append(f"{label} utilisation at {_fmt(compute)}%")
    measured = " and ".join(parts) if parts else "no utilisation counters were measured"
    if bottleneck == MEMORY_BOUND:
        first = f"The stage is limited by device-memory bandwidth ({measured})."
    elif bottleneck == COMPUTE_BOUND:
        first = f"The stage is limited by arithmetic throughput ({measured})."
    else:
        first = f"Neither memory nor math is saturated ({measured}), so latency dominates."
    worst = unhealthy_metrics(m)
    top = next((o for o in opportunities(m, bottleneck) if o.specific), None)
    if top is not None and top.share >= 0.05:
        second = f"Dominant cause: {top.hint} ({top.trigger}), about {100 * top.share:.0f}% of the time."
    elif bottleneck == LATENCY_BOUND and worst:
        second = f"Unhealthy: {', '.join(worst[:3])}."
    elif (
        m.l2_hit_pct is not None
        and m.l2_hit_pct < L2_HIT_HEALTHY_PCT
        and m.over_fetch_ratio is not None
        and m.over_fetch_ratio <= OVER_FETCH_HEALTHY
    ):
        second = (
            f"L2 hit rate {_fmt(m.l2_hit_pct)}% is low, but DRAM traffic is {m.over_fetch_ratio:.2f}× the "
            "byte model: each byte is fetched about once, so locality has nothing to save."
        )
    elif m.l2_hit_pct is not None and m.l2_hit_pct < L2_HIT_HEALTHY_PCT:
        second = f"L2 hit rate {_fmt(m.l2_hit_pct)}% also signals poor data reuse."
    else:
        second = ""
    return (first + (" " + second if second else "")).strip()


def locality_issue(m: Metrics, bottleneck: str) -> bool:
    """SPEC.md's flag (L2 hit < 80 %), raised only where locality could matter: not for
    compulsory misses (measured DRAM bytes within 1.25x of the model: each byte fetched about
    once) and not when the math units are the limit."""
    if m.l2_hit_pct is None or m.l2_hit_pct >= L2_HIT_HEALTHY_PCT or bottleneck == COMPUTE_BOUND:
        return False
    return m.over_fetch_ratio is None or m.over_fetch_ratio > OVER_FETCH_HEALTHY


def diagnose(m: Metrics) -> Diagnosis:
    """Classification, locality flag, unhealthy metrics and ranked opportunities in one call."""
    bottleneck = classify(m)
    _, source = compute_utilisation(m)
    notes = []
    if source == "compute_pct":
        notes.append("compute utilisation taken from SM throughput (no tensor-core work)")
    if source == "none":
        notes.append("no compute utilisation was measured")
    return Diagnosis(
        bottleneck=bottleneck,
        locality_issue=locality_issue(m, bottleneck),
        unhealthy=tuple(unhealthy_metrics(m)),
        opportunities=tuple(opportunities(m, bottleneck)),
        compute_source=source,
        root_cause=root_cause(m, bottleneck),
        notes=tuple(notes),
    )


def roofline_metrics(
    achieved_flops_per_s: float | None,
    achieved_bytes_per_s: float | None,
    peak_flops_per_s: float | None,
    peak_bytes_per_s: float | None,
    tensor_cores: bool,
) -> Metrics:
    """Utilisation estimated from the FLOP/byte model (event mode has no counters).

    DRAM% = model bytes/s ÷ peak bytes/s: a lower bound on real traffic (over-fetch is
    invisible here). Compute% likewise from model FLOPs.
    """
    dram = None
    if achieved_bytes_per_s is not None and peak_bytes_per_s:
        dram = 100.0 * achieved_bytes_per_s / peak_bytes_per_s
    comp = None
    if achieved_flops_per_s is not None and peak_flops_per_s:
        comp = 100.0 * achieved_flops_per_s / peak_flops_per_s
    if tensor_cores:
        return Metrics(tc_pct=comp, dram_pct=dram, compute_attainable_pct=_ROOFLINE_COMPUTE_ATTAINABLE_PCT)
    return Metrics(
        tc_pct=None, dram_pct=dram, compute_pct=comp, compute_attainable_pct=_ROOFLINE_COMPUTE_ATTAINABLE_PCT
    )


# ncu rules whose cause kprof models itself: kprof's estimate stands, ncu's stays in the report.
_RULES_WE_MODEL = {
    "tail": "tail",
    "occupancy": "occupancy",
    "waves": "few_blocks",
    "small grid": "few_blocks",
}


# ncu rules whose estimate is not a change to the kernel: shown in the report, never ranked.
# MemoryL2Compression ("Low Compression Rate") estimates what L2 compression of *compressible
# allocations* would save; whether data compresses depends on its values (zeros, repeats), and
# marking memory compressible is the allocator's business (cuMemCreate), not the kernel's. On the
# recorded H100 profiles it fired on vector_add, softmax and matmul with random data at 0 %
# success and estimates up to 95 %, which would have out-ranked every real cause.
_RULES_NOT_ACTIONABLE = {
    "MemoryL2Compression": "not a kernel change: compression depends on the data's values and on the allocator "
    "marking memory compressible",
}


def rule_not_ranked(rule: dict) -> str | None:
    """Why an ncu rule's estimate is not ranked among the opportunities (None: it may be)."""
    if rule.get("rule") in _RULES_NOT_ACTIONABLE:
        return _RULES_NOT_ACTIONABLE[rule["rule"]]
    cause = rule_cause(rule)
    if cause is not None:
        return f"kprof models this cause ({cause}) itself; its own estimate ranks"
    return None


def rule_cause(rule: dict) -> str | None:
    """The kprof cause an ncu rule is about, when kprof models it (tail effect, occupancy)."""
    text = f"{rule.get('rule') or ''} {rule.get('title') or ''}".lower()
    return next((cause for word, cause in _RULES_WE_MODEL.items() if word in text), None)


def rule_opportunities(rules: list[dict], headroom: float | None = None) -> list[Opportunity]:
    """Nsight Compute rule results that carry a *global* speed-up estimate, as opportunities.

    ncu states the estimate as the share of the kernel's runtime that could be saved (``r`` %),
    the same kind of figure as ours; as a gain that is 1/(1 − r) − 1. It is one input, not
    ranked blindly: the share is capped by the stage's headroom (1 − T_sol/T) like every other
    estimate, and on a tie our own cause ranks first. Rules about a cause kprof models itself
    (tail effect, occupancy: :func:`rule_cause`) are not ranked twice: ours stands, ncu's figure
    stays in the report's rule table; nor are rules whose fix is not a kernel change
    (:func:`rule_not_ranked`). Local estimates (a speed-up of one part of the kernel) and
    rules without an estimate stay in the report but are not ranked. The caller passes as
    ``headroom`` what kprof's specific causes leave unexplained: ncu's causes are credited like
    generic advice.
    """
    cap = METRICS_ONLY_MAX_SHARE if headroom is None else headroom
    out = []
    seen = set()
    for r in rules:
        key = (r.get("section"), r.get("rule"), r.get("title"))
        if key in seen:  # the same rule fired on each kernel of a stage: ranked once
            continue
        seen.add(key)
        pct = r.get("speedup_pct")
        if r.get("type") != "OPTIMIZATION" or pct is None or r.get("speedup_type") != "global" or pct <= 0:
            continue
        if rule_not_ranked(r) is not None:
            continue
        reduction = min(pct / 100.0, cap)
        if reduction < MIN_SHARE:
            continue
        focus = r.get("focus_metrics") or []
        if focus and focus[0].get("value") is not None:
            trigger = f"{focus[0]['name']}={_fmt(float(focus[0]['value']))}"
        else:
            trigger = f"ncu_est_runtime_saving={_fmt(pct)}%"
        title = r.get("title") or r.get("name") or r.get("rule")
        out.append(
            Opportunity(
                f"ncu {r.get('section')}/{r.get('rule')}: {title}",
                gain_pct(reduction),
                trigger,
                "Nsight Compute's own estimate",
                "ncu",
                reduction,
                False,
            )
        )
    out.sort(key=lambda o: o.est_gain_pct, reverse=True)
    return out


def timeline_opportunities(tl: dict, plan_kind: str, headroom: float | None = None) -> list[Opportunity]:
    """Opportunities the timeline shows, as shares of the whole plan's time (capped by the plan's
    headroom 1 − T_sol/T, T_sol the sum of its stages' speed-of-light times).

    * with an idle breakdown (every timeline recorded since issue 26): the causes of
      :func:`idle_opportunities` — sync per step, host-bound, launch overhead, one-off first calls,
      host-to-device copies, other CUDA calls — each the share of the wall time its idle time owns.
    * without one (older recordings), launch-bound (GPU busy b % of the window, kernels shorter than
      the launch interval): fusing launches or replaying them as a CUDA graph removes the idle
      time → share 1 − b.
    * concurrent plan whose streams overlap little: perfect overlap would take the longest
      stream's busy time instead of their union → share 1 − max/union.
    * partial last wave with few waves (1 ≤ waves < 4, last-wave efficiency e < 0.5): one of
      ceil(w) waves is mostly idle → share 1 − w/ceil(w) (assumes one block per SM per wave).
    """
    cap = METRICS_ONLY_MAX_SHARE if headroom is None else headroom
    out: list[Opportunity] = []

    def add(name: str, share: float, trigger: str, hint: str, cause: str) -> None:
        share = min(share, cap)
        if share >= MIN_SHARE:
            out.append(Opportunity(name, gain_pct(share), trigger, hint, cause, share, True))

    idle = tl.get("idle") or {}
    if idle.get("window_ns"):
        # Shares of the wall time, each bounded by the idle time it owns (not by the stages' headroom,
        # a share of their kernel time).
        out.extend(idle_opportunities(idle))
    launch = tl.get("launch") or {}
    busy = launch.get("gpu_busy_pct")
    if launch.get("launch_bound") and busy and not idle.get("window_ns"):
        add(
            "Cut launch overhead: fuse the tiny kernels, or capture the plan in a CUDA graph",
            1.0 - busy / 100.0,
            f"gpu_busy_pct={_fmt(busy)}",
            "the GPU waits for the host between kernels",
            "launch",
        )
    streams = tl.get("streams") or []
    if plan_kind == "concurrent" and len(streams) > 1:
        busy_max = max(s["busy_ns"] for s in streams)
        union = tl.get("gpu_busy_ns") or 0.0
        ov = min(s["overlap_pct"] for s in streams)
        if busy_max > 0 and union > busy_max * 1.1:
            add(
                "Make the streams overlap (fewer blocks per kernel, no implicit syncs between streams, stream "
                "priorities)",
                1.0 - busy_max / union,
                f"stream_overlap_pct={_fmt(ov)}",
                "concurrent stages run mostly one at a time",
                "streams",
            )
    for w in tl.get("waves") or []:
        waves = w.get("blocks_per_sm") or 0.0
        if 1.0 <= waves < 4.0 and w.get("last_wave_efficiency", 1.0) < 0.5:
            add(
                f"Even out the last wave of {w['kernel']} (grid a multiple of the SM count, persistent kernel)",
                1.0 - waves / math.ceil(waves),
                f"last_wave_efficiency={w['last_wave_efficiency']:.2f}",
                "wave quantization",
                "tail",
            )
    out.sort(key=lambda o: o.est_gain_pct, reverse=True)
    return out


def _calls(ev: dict, key: str, n: int = 2) -> str:
    rows = ev.get(key) or []
    return ", ".join(f"{r['call']} x{r['count']}" for r in rows[:n])


def idle_opportunities(idle: dict) -> list[Opportunity]:
    """Causes from a timeline's idle breakdown (:mod:`kprof_mcp.analysis.idle`), each a share of
    the window's wall time: the GPU idle time its host state owns. No cause can claim more than
    the idle time it owns, so none passes the speed-of-light bound of a timeline (a GPU never idle).

    * sync: a sync (or a device-to-host copy) per step drains the GPU, and the host's work after it
      cannot overlap GPU work. Without the sync the step takes max(host, GPU) instead of their sum:
      the removable share is min(idle after syncs, GPU busy) / window.
    * host: the host's own work (outside CUDA for 100 us or more at a stretch) with the GPU waiting:
      all of that idle time, plus the idle time after syncs that overlap could not hide (beyond the
      GPU's busy time: host work that stays when the syncs go).
    * launch: idle while the host is in launch calls or issuing the next operation (< 100 us
      between calls): CUDA graphs or fusion remove it. Only with more than one launch per
      occurrence (with one, the gap is the loop around the work).
    * first_call: module loading, JIT, first launches inside the window: one-off, not per step.
    * copy_h2d: the host staging host-to-device copies while the GPU waits, plus copy time no kernel
      overlaps.
    * other_api: other CUDA calls (allocation, frees) while the GPU waits.
    """
    window = float(idle.get("window_ns") or 0.0)
    if window <= 0:
        return []
    parts, ev = idle.get("parts_ns") or {}, idle.get("evidence") or {}
    occ = max(1, int(idle.get("occurrences") or 1))
    busy_pct = 100.0 * float(idle.get("busy_ns") or 0.0) / window
    out: list[Opportunity] = []

    def add(name: str, ns: float, trigger: str, hint: str, cause: str) -> None:
        share = min(ns / window, METRICS_ONLY_MAX_SHARE)
        if share >= MIN_SHARE:
            out.append(
                Opportunity(
                    name,
                    gain_pct(share),
                    f"{trigger}; gpu_busy_pct={_fmt(busy_pct)}",
                    hint,
                    cause,
                    share,
                    True,
                )
            )

    def per(ns: float) -> str:  # µs per occurrence: in the report's "Where the wall time went" table
        return f"{_fmt(100.0 * ns / window)}% of the wall time"

    sync = float(parts.get("sync") or 0.0)
    add(
        "Stop synchronising every step: keep per-step values on the GPU (losses and metrics as tensors, read "
        "with .item()/.cpu() every N steps or once at the end), so the host's work overlaps the GPU's",
        min(sync, float(idle.get("busy_ns") or 0.0)),
        f"gpu_idle_after_sync={per(sync)}, after {_calls(ev, 'sync_calls')}"
        + (
            " (made by " + ", ".join(f"{r['op']} x{r['count']}" for r in ev["sync_ops"][:2]) + ")"
            if ev.get("sync_ops")
            else ""
        ),
        "the GPU drains at each sync and waits while the host works",
        "sync",
    )
    # Idle after syncs beyond what overlap can hide is host work that stays when the syncs go.
    host = float(parts.get("host") or 0.0) + max(0.0, sync - float(idle.get("busy_ns") or 0.0))
    med = ev.get("host_stretch_median_ns")
    add(
        "Most of this run is the host's own time (start-up, imports, test collection, its Python): the GPU's "
        "kernels are not what limits it. Mark the steps to measure with kprof.range (or profile a loop of them) "
        "to see their own time"
        if idle.get("scope") == "process"
        else "Take the host's work off the GPU's critical path: build the data on the GPU, or in DataLoader workers "
        "(num_workers, pin_memory) that run ahead of the step; move per-step Python/numpy work out of the loop",
        host,
        f"gpu_idle_in_host_work={per(host)}"
        + (f", {ev.get('host_stretches')} host stretches" if med else ""),
        "the GPU waits for a host that has not issued the work yet",
        "host",
    )
    # One launch per occurrence: the gap between occurrences is the loop around them, not the work's.
    launch = float(parts.get("launch") or 0.0) if float(ev.get("launches") or 0) > occ else 0.0
    add(
        "Cut launch overhead: capture the step as a CUDA graph (torch.cuda.CUDAGraph, torch.compile "
        "mode='reduce-overhead') or fuse the small kernels",
        launch,
        f"gpu_idle_in_launches={per(launch)}, {_fmt(float(ev.get('launches') or 0) / occ)} launches per occurrence",
        "each kernel takes about as long as the host needs to issue the next",
        "launch",
    )
    first = float(parts.get("first_call") or 0.0)
    add(
        "Keep one-off costs out of the measured steps: warm up first (module loading, Triton JIT, autotuning), "
        "or cache compiled kernels",
        first,
        f"gpu_idle_in_first_calls={per(first)}, {_calls(ev, 'first_call_calls')}",
        "lazy module loads and first launches inside the window",
        "first_call",
    )
    copy = float(parts.get("copy_h2d") or 0.0) + float(ev.get("h2d_exposed_ns") or 0.0)
    add(
        "Copy host-to-device from pinned memory with non_blocking=True, ahead of use on a side stream",
        copy,
        f"h2d_copy_time_not_overlapped={per(copy)}, {ev.get('h2d_copies', 0)} copies",
        "host-to-device copies on the critical path",
        "copy",
    )
    other = float(parts.get("other_api") or 0.0)
    add(
        f"Take these CUDA calls out of the loop ({_calls(ev, 'other_calls', 3)}): reuse buffers instead of "
        "allocating, no per-step device queries",
        other,
        f"gpu_idle_in_other_cuda_calls={per(other)}",
        "CUDA calls other than launches and copies on the critical path",
        "cuda_api",
    )
    out.sort(key=lambda o: o.est_gain_pct, reverse=True)
    return out
