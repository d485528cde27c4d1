"""Issue 26's cause catalogue: causes named from the hardware's accounting (stall reasons, pipes,
instruction mix, atomics, shared-memory conflicts), and the evidence the generic advice quotes."""

from __future__ import annotations

from .metrics import (
    DRAM_SATURATED_PCT,
    METRICS_ONLY_MAX_SHARE,
    TC_HEALTHY_PCT,
    Metrics,
    _fmt,
    compute_utilisation,
)

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
