"""The metrics a stage is classified with, SPEC.md's health thresholds and bottleneck table, and the
time model's arithmetic (gain from a share of the time). See the package docstring."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..accounting import Accounting

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
# DRAM throughput at which scattered (sector-sized) traffic saturates the memory system, % of the
# datasheet peak: a property of the machine, measured by `kprof device --calibrate` (dram_sector: random
# 32-byte sectors, Metrics.dram_sector_pct). Devices without that measurement take this figure, first
# seen on an H100 where a strided transpose and a random gather both ran at 59-62 % of the peak while their
# time was all DRAM traffic.
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
# Not a classification: a profile's stage whose figures are not its kernel's work (issue 37), set by
# analysis/assessment.py from analysis/peaks.py's suspect_reasons; never returned by classify.
SUSPECT = "suspect"


@dataclass(frozen=True)
class Metrics:
    """Per-stage utilisation figures. ``None`` means "not measured", never zero."""

    tc_pct: float | None = None
    dram_pct: float | None = None
    occupancy_pct: float | None = None
    op_floor_ns: float | None = None  # a lean eager op's host cost in the command's process (replay.floors)
    host_per_launch_ns: float | None = None  # the host's time issuing each launch (replay.floors)
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
    l1_bytes: float | None = None  # L1TEX tag-stage bytes (global and local accesses; not shared memory)
    kernel_busy: float = 1.0  # share of the stage's time its kernels run (a timeline's span has launch gaps)
    # The most of the stage's time faster kernels can save: a command's step replayed with every GPU
    # operation at its floor is the host's alone (analysis.machine_inputs.host_floor_share); it bounds every
    # change that keeps the launches (fusion and work not needed may remove kernels, their launches with
    # them). None: no bound.
    host_cap: float | None = None
    # The same for a costlier method's what-if: its host time above the lean eager op's floor goes with it (the
    # launches stay at that floor: machine_inputs.host_method_share). None: host_cap.
    host_cap_method: float | None = None
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
    int_ops: float | None = None  # the model's integer and logic operations (StageModel.int_ops)
    elem_bytes: float | None = None
    attainable_sol_ns: float | None = None
    # The machine model (issue 36: kprof_mcp.machines, analysis.diagnosis.limiter): the architecture's
    # pipes and moves, and what the what-ifs weigh: the stage's dtype, its kernels' names, its model's
    # elements and bytes, the SM clock it ran at, the launch's
    # theoretical occupancy, the shortest launch (no gain goes under it) and the speed-of-light time of
    # the best legal mix of pipes (the work on the fastest pipe that can do it: a dot on tensor cores).
    machine: Any = field(default=None, compare=False)
    dtype: str | None = None
    kernel_names: tuple[str, ...] = ()
    elements: float | None = None
    bytes_model: float | None = None
    sm_clock_hz: float | None = None
    clock_hz: float | None = None  # the SM clock it ran at: measured, locked, else the device's maximum
    copy_share: float | None = None  # a timeline stage's kernel time in kernels that only copy data
    # Float64 kernels in a narrower stage: (share of its kernel time float32 removes, how many kernels).
    wide_share: tuple[float, int] | None = None
    # (share of the kernel time in vendor-library GEMM kernels, their mean ns per launch): a timeline's
    library_gemm: tuple[float, float] | None = None
    # A command's stage timed without counters (a timeline): its kernels are the application's libraries',
    # and nothing measured says why they are slow. ``top_kernel``: (name, share of the kernel time).
    command_no_counters: bool = False
    top_kernel: tuple[str, float] | None = None
    # What the GPU's units did while that kernel ran (Nsight Systems' GPU metrics, % of peak: dram_read_pct,
    # dram_write_pct, issue_pct, warps_pct, ...); None where the timeline was recorded without them.
    top_activity: dict[str, float] | None = None
    theoretical_occupancy_pct: float | None = None
    floor_ns: float | None = None
    best_sol_ns: float | None = None
    # What the kernel's TTIR says its work is, by source line (parsers/ttir.py): evidence of a move's work
    # (a dot on FMA pipes, libdevice calls, fp64 math, integer division) and the line to edit.
    ir_ops: tuple[Any, ...] = ()
    dram_sector_pct: float | None = None  # scattered-sector DRAM bandwidth, % of the peak (measured)
    dram_peak_bps: float | None = None  # the device's DRAM bandwidth (bytes/s): what host-link bytes move to
    # The kernel's static SASS mix (analysis.diagnosis.static_mix.Listing): the machine model's pipes
    # without counters (event mode). None where no listing was compiled.
    listing: Any = field(default=None, compare=False)

    @property
    def scattered_dram_pct(self) -> float:
        """The DRAM throughput, % of peak, at which scattered sector traffic saturates DRAM."""
        return self.dram_sector_pct or DRAM_SATURATED_PCT

    @property
    def best_headroom(self) -> float | None:
        """The largest share of the time any change could remove, the work on its best legal pipes:
        1 − T_best/T (the speed-of-light bound; never less than :attr:`headroom`)."""
        h = self.headroom
        if self.time_ns is None or self.best_sol_ns is None or self.time_ns <= 0:
            return h
        return max(h or 0.0, 1.0 - self.best_sol_ns / self.time_ns)

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
class Facts:
    """The measured values an opportunity was found from, unformatted (None: not part of this
    one's evidence). Each cause fills its own; :mod:`kprof_mcp.render.diagnosis` words them."""

    atomic_l2_sectors: float | None = None
    atomic_share: float | None = None
    # the bound level's use (% of peak) where code beyond the model feeds it (that level: metric)
    bound_pct: float | None = None
    bytes_per_flop: float | None = None
    calls: list[Any] | None = None
    compute_pct: float | None = None
    conflicts_per_wavefront: float | None = None
    copies: int | None = None
    copy_ns: float | None = None  # a round trip's device-to-host copy time per occurrence
    copy_share: float | None = None
    dtype_from: str | None = None
    dtype_to: str | None = None
    dram_pct: float | None = None
    ffma_flops_over_model: float | None = None
    fence_wait: float | None = None  # share of the warps' time waiting on memory fences (membar)
    fma_pct: float | None = None
    focus: tuple[Any, ...] | None = None
    gpu_busy_pct: float | None = None
    grid_blocks: int | None = None
    hot_slice_pct: float | None = None  # the busiest L2 slice's (or atomic unit's) use, % of its peak
    idle_pct: float | None = None
    issue_active_pct: float | None = None
    kernel: str | None = None
    kernels: int | None = None
    l2_hit_pct: float | None = None
    last_wave_efficiency: float | None = None
    launches_per_occurrence: float | None = None
    limiter: str | None = None
    lines: tuple[str, ...] | None = None
    local_share: float | None = None
    local_spill_bytes: float | None = None
    memory_stalls: bool | None = None
    memory_wait: float | None = None
    metric: str | None = None
    move: str | None = None
    next_limiter: str | None = None
    per_element: tuple[Any, ...] | None = None
    advice: str | None = None
    condition: str | None = None
    resource: str | None = None
    target: str | None = None
    util_pct: float | None = None
    occupancy_pct: float | None = None
    op_floor_ns: float | None = None  # a lean eager op's host cost in the command's process (replay.floors)
    host_per_launch_ns: float | None = None  # the host's time issuing each launch (replay.floors)
    ops: list[Any] | None = None
    over_fetch_ratio: float | None = None
    sectors_per_request: float | None = None  # global load sectors per request (narrow loads)
    reread: bool | None = None  # over-fetch at a cache level: data re-read through it
    process_scope: bool | None = None
    reuse_tile: int | None = None
    rule: str | None = None
    section: str | None = None
    shared_wait: float | None = None
    slice_avg_pct: float | None = None  # the L2 slices' (or atomic units') average use, % of peak
    sm_active_pct: float | None = None
    sm_count: int | None = None
    source: str | None = None
    # An idle cause's Python line (analysis.idle_sources: line, op, calls, idle_ns, share; host work
    # also "after"), from a recording with Python backtraces.
    source_line: dict[str, Any] | None = None
    speedup: float | None = None
    speedup_pct: float | None = None
    stalls: tuple[Any, ...] | None = None
    stream_overlap_pct: float | None = None
    stretch_median_ns: float | None = None
    stretches: int | None = None
    target_bytes_per_flop: float | None = None
    tc_pct: float | None = None
    threads_per_inst: float | None = None
    tile: float | None = None
    time_over_roof: float | None = None
    activity: dict[str, float] | None = None  # GPU metrics samples over a timeline kernel's run (% of peak)
    serial: bool | None = None  # those samples show every unit idle (parallelism.serial_kernel)
    title: str | None = None
    uncoalesced: tuple[Any, ...] | None = None
    host_bytes: float | None = None  # bytes the kernel's loads and stores sent over the host link
    value: float | None = None
    waves_per_sm: float | None = None


@dataclass(frozen=True)
class Opportunity:
    """One way to make the stage faster, as facts: ``cause`` (what it is about: spills, few_blocks,
    tail, over_fetch, fusion, launch, streams, dram_roof, compute_roof, latency, occupancy, ncu, the
    catalogue's and the idle breakdown's causes) and ``facts``, the measured values that found it,
    unformatted. :mod:`kprof_mcp.render.diagnosis` words it (one wording per cause)."""

    cause: str
    est_gain_pct: float
    share: float = 0.0  # the share of the stage's time it would remove (gain = 1/(1 − share) − 1)
    specific: bool = True  # a cause the counters pin down (False: generic advice, credited only what is left)
    facts: Facts = field(default_factory=Facts, hash=False)


@dataclass(frozen=True)
class RootCauseFacts:
    """What limits the stage and its strongest symptom: ``symptom`` is ``dominant`` (a specific
    opportunity owns ≥ 5 % of the time: ``dominant``), ``unhealthy`` (latency-bound: the metrics out
    of range), ``compulsory`` (L2 hit low but each byte fetched about once), ``low_l2`` or ``""``."""

    bottleneck: str
    compute_source: str
    dram_pct: float | None
    compute_pct: float | None
    symptom: str = ""
    dominant: Opportunity | None = None
    unhealthy: tuple[tuple[str, float], ...] = ()
    l2_hit_pct: float | None = None
    over_fetch_ratio: float | None = None
    limiter: Any = None  # analysis.diagnosis.limiter.Limiter: the resource (or stall family) that limits


@dataclass(frozen=True)
class Diagnosis:
    bottleneck: str
    locality_issue: bool
    unhealthy: tuple[tuple[str, float], ...]  # (metric, value) outside its healthy range
    opportunities: tuple[Opportunity, ...]
    compute_source: str  # "tc_pct", "compute_pct" or "none"
    root_cause: RootCauseFacts


def compute_utilisation(m: Metrics) -> tuple[float | None, str]:
    """The compute figure to classify with, and where it came from.

    TC% when the kernel's work is the tensor pipe's (the stage's model says tensor cores, or the tensor pipe
    is at least as busy as the SM's busiest unit); SM throughput otherwise, and when TC% is absent or ~0
    (kernels with no tensor-core work would otherwise all look latency-bound, and an FP32 kernel issuing
    every slot look latency-bound by its few percent of tensor-pipe use).
    """
    if (
        m.tc_pct is not None
        and m.tc_pct >= 1.0
        and (m.tensor_work or m.compute_pct is None or m.tc_pct >= m.compute_pct)
    ):
        return m.tc_pct, "tc_pct"
    if m.compute_pct is not None:
        return m.compute_pct, "compute_pct"
    if m.tc_pct is not None:
        return m.tc_pct, "tc_pct"
    return None, "none"


def unhealthy_metrics(m: Metrics) -> list[tuple[str, float]]:
    """``(metric, value)`` for each measured metric outside its healthy range."""
    out: list[tuple[str, float]] = []
    compute, source = compute_utilisation(m)
    if compute is not None and compute <= TC_HEALTHY_PCT:
        out.append((source, compute))
    if m.dram_pct is not None and m.dram_pct <= DRAM_HEALTHY_PCT:
        out.append(("dram_pct", m.dram_pct))
    if m.occupancy_pct is not None and m.occupancy_pct <= OCCUPANCY_HEALTHY_PCT:
        out.append(("occupancy_pct", m.occupancy_pct))
    if m.l2_hit_pct is not None and m.l2_hit_pct < L2_HIT_HEALTHY_PCT:
        out.append(("l2_hit_pct", m.l2_hit_pct))
    if m.local_spill_bytes is not None and m.local_spill_bytes > SPILL_HEALTHY_BYTES:
        out.append(("local_spill_bytes", m.local_spill_bytes))
    if m.waves_per_sm is not None and m.waves_per_sm <= WAVES_HEALTHY:
        out.append(("waves_per_sm", m.waves_per_sm))
    if m.over_fetch_ratio is not None and m.over_fetch_ratio > OVER_FETCH_HEALTHY:
        out.append(("dram_bytes/model", m.over_fetch_ratio))
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


def locality_issue(m: Metrics, bottleneck: str) -> bool:
    """SPEC.md's flag (L2 hit < 80 %), raised only where locality could matter: not for
    compulsory misses (measured DRAM bytes within 1.25x of the model: each byte fetched about
    once) and not when the math units are the limit."""
    if m.l2_hit_pct is None or m.l2_hit_pct >= L2_HIT_HEALTHY_PCT or bottleneck == COMPUTE_BOUND:
        return False
    return m.over_fetch_ratio is None or m.over_fetch_ratio > OVER_FETCH_HEALTHY
