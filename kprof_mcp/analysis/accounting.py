"""Where a kernel's time went, from the hardware's own accounting (Nsight Compute counters).

Pure: a function of the numbers in ``StageResult.accounting`` (see
:data:`kprof_mcp.parsers.ncu.ACCOUNTING`), nothing read from a device or a file.

* **Warp states.** ``stall_<reason>`` is the cycles warps spent stalled for that reason per
  issued instruction (ncu's WarpStateStats); with ``selected`` (the issuing cycle) they add up to
  the average cycles between two issues of a warp. Each reason's share of that sum is the share of
  the warps' time it owns: the evidence a cause is credited from.
* **Pipes.** Utilisation of the FMA, ALU, FP64, LSU, XU, shared and tensor pipes (% of peak while
  the SM was active).
* **Instruction mix.** Tensor-core (HMMA/GMMA) against FFMA instructions: dot-heavy work on the FMA
  pipes shows as FFMA with no tensor instruction.
* **Atomics.** Global atomic and reduction requests per executed instruction and the L2 sectors they
  touch; contention shows as few sectors per request (many threads on one address) with the warps
  waiting on the memory system.
* **Coalescing.** Sectors per global load/store request: 4 when a warp's 32 four-byte accesses fill
  one 128-byte line, up to 32 when every thread touches its own sector.
* **Shared memory.** Bank conflicts per wavefront.
* **Divergence.** Active threads per executed warp instruction (32: none).
* **Work per op class and per pipe** (issue 36, the machine model's inputs): thread-level
  instructions by op class (FP64 DFMA/DADD/DMUL, FP32 FFMA/FADD/FMUL, FP16 HFMA2/HADD2/HMUL2,
  integer, conversions) and warp instructions issued to each pipe (FMA, ALU, FP64, XU, LSU, ...), the
  work to set against each pipe's throughput per SM per clock.
* **Memory levels.** Utilisation of L1TEX, L2 and DRAM (% of peak) and the bytes L2 and shared
  memory moved; local-memory (spill) requests.
* **SM activity.** The share of the kernel's time an average SM was active: pipe % are of active
  cycles, so a pipe's share of the kernel's time is its % times this fraction.
* **Occupancy limits.** The blocks per SM that registers, shared memory, the warp count and the
  block count each allow (launch statistics): the smallest names what limits occupancy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..parsers.ncu_metrics import INST_PIPES, OP_CLASSES, STALL_REASONS

# What each stall reason means, in the words a kernel engineer uses, and which family it belongs to.
STALL_MEANING = {
    "long_scoreboard": ("waiting for global/local memory (L1TEX: DRAM, L2, spills)", "memory"),
    "short_scoreboard": ("waiting for shared memory or a special-function result (MIO)", "shared"),
    "lg_throttle": (
        "the local/global memory queue is full (too many memory instructions in flight)",
        "memory",
    ),
    "mio_throttle": ("the MIO queue is full (shared memory, atomics to shared, special functions)", "shared"),
    "math_pipe_throttle": ("a math pipe is busy (the kernel is compute-bound on that pipe)", "compute"),
    "tex_throttle": ("the texture/L1TEX queue is full", "memory"),
    "barrier": ("waiting at a block-wide barrier (__syncthreads / tl.debug_barrier)", "sync"),
    "membar": ("waiting on a memory barrier (fences, often after atomics)", "sync"),
    "wait": ("a fixed-latency dependency (instruction latency not hidden)", "latency"),
    "branch_resolving": ("waiting for a branch target to be resolved", "control"),
    "no_instruction": ("no instruction fetched (instruction cache miss, or just after a branch)", "control"),
    "drain": ("waiting for memory writes to drain at exit", "memory"),
    "dispatch_stall": ("the dispatcher could not issue (pipeline conflict)", "compute"),
    "imc_miss": ("immediate constant cache miss", "control"),
    "misc": ("miscellaneous", "other"),
    "sleeping": ("warps sleeping (nanosleep, or all threads yielded)", "sync"),
    "gmma": ("waiting for warpgroup MMA (wgmma) results", "compute"),
    "not_selected": ("eligible, but another warp was issued (the scheduler was busy: good)", "issue"),
    "selected": ("issuing an instruction (the useful cycle)", "issue"),
}


@dataclass(frozen=True)
class Stall:
    reason: str
    cycles_per_issue: float
    share: float  # of all the warps' cycles between issues

    @property
    def meaning(self) -> str:
        return STALL_MEANING.get(self.reason, ("", ""))[0]


@dataclass(frozen=True)
class Accounting:
    """The accounting of one stage (None: that counter was not collected)."""

    stalls: list[Stall] = field(default_factory=list)  # largest share first
    cycles_per_issue: float | None = None  # the sum over reasons: average cycles between a warp's issues
    issue_active_pct: float | None = None
    pipes: dict[str, float] = field(default_factory=dict)  # pipe -> % of peak
    inst_executed: float | None = None
    tensor_inst: float | None = None  # tensor-pipe warp instructions (HMMA incl. GMMA: _tensor_inst)
    ffma_thread_inst: float | None = None
    atomic_requests: float | None = None  # global atomic + reduction requests (warp level)
    atomic_l2_sectors: float | None = None
    ld_sectors: float | None = None
    st_sectors: float | None = None
    ld_sectors_per_request: float | None = None
    st_sectors_per_request: float | None = None
    bank_conflicts_per_wavefront: float | None = None
    # Of L1's data-stage wavefronts, the global accesses' share (:func:`_l1_global_share`): the rest are
    # shared memory's (a block reduction, a layout change), which re-read global data does not cause.
    l1_global_share: float | None = None
    global_ld_requests: float | None = None  # warp-level global load instructions (LSU issues)
    threads_per_inst: float | None = None
    # Blocks per SM that each resource allows (registers, shared_mem, warps, blocks): the smallest
    # is what limits occupancy.
    occupancy_limits: dict[str, float] = field(default_factory=dict)
    # Thread-level instructions (predicate on) by op class: ffma, fadd, fmul, dfma, dadd, dmul, hfma,
    # hadd, hmul, integer, conversion (ncu_metrics.OP_CLASSES); empty in recordings made before
    # issue 36, a class absent when its counter was not collected.
    op_counts: dict[str, float] = field(default_factory=dict)
    # Warp instructions issued to each pipe: fma, fmaheavy, alu, fp64, xu, lsu, uniform
    # (ncu_metrics.INST_PIPES), and the tensor pipe's hmma, gmma, dmma.
    pipe_inst: dict[str, float] = field(default_factory=dict)
    # Memory level -> utilisation, % of its peak: l1 (of the SM's active cycles), l2 and dram
    # (of elapsed cycles).
    levels: dict[str, float] = field(default_factory=dict)
    # Memory level -> bytes moved: l2 (every L2 access), shared (shared-memory data, SASS level).
    level_bytes: dict[str, float] = field(default_factory=dict)
    # The L2's slices (% of one slice's peak over the elapsed time): ``l2`` the busiest slice's throughput,
    # ``l2_atomic`` the atomic units' average, ``l2_atomic_max`` the busiest slice's atomic unit.
    slices: dict[str, float] = field(default_factory=dict)
    local_requests: float | None = None  # local-memory load + store requests (warp level): spills
    sm_cycles_active: float | None = None  # an average SM's active cycles
    sm_cycles_elapsed: float | None = None  # an average SM's elapsed cycles

    @property
    def sm_active_frac(self) -> float | None:
        """The share of the kernel's time an average SM had work (1: busy throughout). A pipe's %
        (of active cycles) times this is its share of the elapsed time."""
        if self.sm_cycles_active is None or not self.sm_cycles_elapsed:
            return None
        return min(1.0, self.sm_cycles_active / self.sm_cycles_elapsed)

    @property
    def occupancy_limiter(self) -> tuple[str, float] | None:
        if not self.occupancy_limits:
            return None
        name = min(self.occupancy_limits, key=lambda k: self.occupancy_limits[k])
        return name, self.occupancy_limits[name]

    @property
    def measured(self) -> bool:
        return bool(self.stalls or self.pipes)

    def share(self, *reasons: str) -> float:
        """The share of the warps' time owned by ``reasons`` together (0 when not measured)."""
        return sum(s.share for s in self.stalls if s.reason in reasons)

    @property
    def atomics_per_inst(self) -> float | None:
        if self.atomic_requests is None or not self.inst_executed:
            return None
        return self.atomic_requests / self.inst_executed

    @property
    def atomic_sector_share(self) -> float | None:
        """Atomic/reduction L2 sectors as a share of all global sectors (loads, stores, atomics)."""
        parts = (self.atomic_l2_sectors, self.ld_sectors, self.st_sectors)
        total = sum(p for p in parts if p)
        return None if self.atomic_l2_sectors is None or not total else self.atomic_l2_sectors / total

    @property
    def memory_wait(self) -> float:
        """The share of the warps' time spent waiting on the memory system or on each other while it
        answers: scoreboards, memory-queue throttles, barriers, fences, drain."""
        return self.share(
            "long_scoreboard",
            "short_scoreboard",
            "lg_throttle",
            "mio_throttle",
            "tex_throttle",
            "barrier",
            "membar",
            "drain",
        )

    @property
    def unfenced_wait(self) -> float:
        """:attr:`memory_wait` less the fences' (``membar``: a warp waiting for its own earlier accesses,
        contended or not): the waiting an atomic's contention or returned value owns."""
        return self.memory_wait - self.share("membar")

    @property
    def shared_wait(self) -> float:
        """The share of the warps' time waiting on shared memory (MIO queue full, short scoreboard)."""
        return self.share("mio_throttle", "short_scoreboard")

    @property
    def divergence(self) -> float | None:
        """The share of lanes idle in an average warp instruction (0: none)."""
        return None if self.threads_per_inst is None else max(0.0, 1.0 - self.threads_per_inst / 32.0)


_PIPES = {
    "tensor": None,
    "fma": "pipe_fma_pct",
    "alu": "pipe_alu_pct",
    "fp64": "pipe_fp64_pct",
    "lsu": "pipe_lsu_pct",
    "xu": "pipe_xu_pct",
    "shared": "pipe_shared_pct",
}


def _ratio(num: float | None, den: float | None) -> float | None:
    return None if num is None or not den else num / den


def _tensor_inst(hmma: float | None, gmma: float | None) -> float | None:
    """Tensor-pipe warp instructions. On Hopper Nsight Compute's ``pipe_tensor_op_hmma`` counter
    counts the warpgroup (GMMA) instructions too: every recording with GMMA work has the two equal
    (tests/calibration/recorded-accounting: the FMA GEMM's fix 4 194 304 and 4 194 304, matmul v3
    1 048 576 and 1 048 576), so their sum counted the GMMAs twice. The larger of the two is the
    pipe's count on every architecture (no GMMA counter before sm_90: HMMA alone)."""
    vals = [v for v in (hmma, gmma) if v is not None]
    return max(vals) if vals else None


def _sum(*vals: float | None) -> float | None:
    got = [v for v in vals if v is not None]
    return sum(got) if got else None


def _l1_global_share(acc: dict[str, float]) -> float | None:
    """Global accesses' share of L1's data-stage wavefronts: a request moves up to 128 bytes (4 sectors) a
    wavefront, so its wavefronts are max(requests, sectors / 4) (a 2-byte-a-thread load is one wavefront of
    64 bytes, a 16-byte one four), against shared memory's wavefronts as counted. None when not collected."""
    shared = acc.get("shared_wavefronts")
    parts = [(acc.get(f"global_{k}_requests"), acc.get(f"global_{k}_sectors")) for k in ("ld", "st")]
    if shared is None or any(r is None or s is None for r, s in parts):
        return None
    g = sum(max(r, s / 4.0) for r, s in parts)
    return g / (g + shared) if g + shared > 0 else None


def account(acc: dict[str, float], tc_pct: float | None = None, dram_pct: float | None = None) -> Accounting:
    """The accounting of one stage from its raw counters (``StageResult.accounting``); ``tc_pct``
    and ``dram_pct`` (the stage's own metrics, not accounting counters) join the pipes and the
    memory levels."""
    raw = {r: acc.get(f"stall_{r}") for r in STALL_REASONS}
    total = sum(v for v in raw.values() if v is not None and v > 0)
    stalls = sorted(
        (Stall(r, v, v / total) for r, v in raw.items() if v is not None and v > 0 and total > 0),
        key=lambda s: -s.share,
    )
    pipes = {name: acc[key] for name, key in _PIPES.items() if key and acc.get(key) is not None}
    if tc_pct is not None:
        pipes["tensor"] = tc_pct
    return Accounting(
        stalls=stalls,
        cycles_per_issue=total or None,
        issue_active_pct=acc.get("issue_active_pct"),
        pipes=pipes,
        inst_executed=acc.get("inst_executed"),
        tensor_inst=_tensor_inst(acc.get("hmma_inst"), acc.get("gmma_inst")),
        ffma_thread_inst=acc.get("ffma_thread_inst"),
        atomic_requests=_sum(acc.get("global_atom_requests"), acc.get("global_red_requests")),
        atomic_l2_sectors=_sum(acc.get("l2_atom_sectors"), acc.get("l2_red_sectors")),
        ld_sectors=acc.get("global_ld_sectors"),
        st_sectors=acc.get("global_st_sectors"),
        ld_sectors_per_request=_ratio(acc.get("global_ld_sectors"), acc.get("global_ld_requests")),
        st_sectors_per_request=_ratio(acc.get("global_st_sectors"), acc.get("global_st_requests")),
        bank_conflicts_per_wavefront=_ratio(acc.get("shared_bank_conflicts"), acc.get("shared_wavefronts")),
        l1_global_share=_l1_global_share(acc),
        global_ld_requests=acc.get("global_ld_requests"),
        threads_per_inst=acc.get("threads_per_inst"),
        occupancy_limits={
            k[len("occ_limit_") :]: acc[k]
            for k in ("occ_limit_registers", "occ_limit_shared_mem", "occ_limit_warps", "occ_limit_blocks")
            if acc.get(k) is not None
        },
        op_counts={op: v for op in OP_CLASSES if (v := acc.get(f"{op}_thread_inst")) is not None},
        pipe_inst={
            name: v
            for name, key in (
                *((p, f"pipe_{p}_inst") for p in INST_PIPES),
                ("hmma", "hmma_inst"),
                ("gmma", "gmma_inst"),
                ("dmma", "dmma_inst"),
            )
            if (v := acc.get(key)) is not None
        },
        levels={
            name: v
            for name, v in (
                ("l1", acc.get("l1_pct")),
                ("l2", acc.get("l2_pct")),
                ("dram", dram_pct),
                ("host", acc.get("host_link_pct")),
            )
            if v is not None
        },
        level_bytes={
            name: v * scale
            for name, key, scale in (
                ("l2", "l2_bytes", 1.0),
                ("shared", "shared_bytes", 1.0),
                ("host", "sysmem_sectors", 32.0),  # 32-byte L2 sectors to system memory
            )
            if (v := acc.get(key)) is not None
        },
        slices={
            name: v
            for name, key in (
                ("l2", "l2_slice_pct"),
                ("l2_atomic", "l2_atomic_pct"),
                ("l2_atomic_max", "l2_atomic_slice_pct"),
            )
            if (v := acc.get(key)) is not None
        },
        local_requests=_sum(acc.get("local_ld_requests"), acc.get("local_st_requests")),
        sm_cycles_active=acc.get("sm_cycles_active"),
        sm_cycles_elapsed=acc.get("sm_cycles_elapsed"),
    )
