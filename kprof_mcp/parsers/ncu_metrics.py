"""Nsight Compute's metric names: each logical metric kprof reads and its candidate names
(:data:`METRICS`, with the accounting counters :data:`ACCOUNTING`), the ``--query-metrics``
catalog, and the NVTX range a stage's launches run in. Pure."""

from __future__ import annotations

import csv
import io

RANGE_PREFIX = "kprof_"

# Logical metric -> candidate metric names, the first one the installed Nsight Compute knows
# wins. Nsight Compute renames metrics between versions and chips (on 2025.3 with the full
# set, dram__throughput is absent from the report while gpu__dram_throughput is present).
METRICS: dict[str, tuple[str, ...]] = {
    "duration_ns": ("gpu__time_duration.sum",),
    "tc_pct": (
        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active",
    ),
    "sm_pct": ("sm__throughput.avg.pct_of_peak_sustained_elapsed",),
    "dram_pct": (
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    "achieved_occupancy_pct": ("sm__warps_active.avg.pct_of_peak_sustained_active",),
    "theoretical_occupancy_pct": ("sm__maximum_warps_per_active_cycle_pct",),
    "l2_hit_pct": ("lts__t_sector_hit_rate.pct",),
    "local_load_bytes": ("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",),
    "local_store_bytes": ("l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",),
    "l1_bytes": ("l1tex__t_bytes.sum",),  # all L1TEX traffic: the denominator of the spill share
    "dram_read_bytes": ("dram__bytes_read.sum",),
    "dram_write_bytes": ("dram__bytes_write.sum",),
    "waves_per_sm": ("launch__waves_per_multiprocessor",),
    "registers_per_thread": ("launch__registers_per_thread",),
    "shared_mem_per_block_bytes": ("launch__shared_mem_per_block",),
    "grid_size": ("launch__grid_size",),
    "block_size": ("launch__block_size",),
    "sm_clock_hz": ("sm__cycles_elapsed.avg.per_second",),
    "dram_clock_hz": ("dram__cycles_elapsed.avg.per_second",),
}
# Where the time went (issue 26): the hardware's own accounting of a kernel's cycles, the figures
# ncu's WarpStateStats, ComputeWorkloadAnalysis, InstructionStats and MemoryWorkloadAnalysis
# sections are built from. Stall reasons are cycles warps spent stalled per issued instruction
# (their sum, with "selected", is the average cycles between a warp's issues): normalised, they
# say what share of the warps' time each reason owns.
STALL_REASONS = (
    "long_scoreboard",
    "short_scoreboard",
    "lg_throttle",
    "mio_throttle",
    "math_pipe_throttle",
    "tex_throttle",
    "barrier",
    "membar",
    "wait",
    "branch_resolving",
    "no_instruction",
    "drain",
    "dispatch_stall",
    "imc_miss",
    "misc",
    "sleeping",
    "gmma",
    "not_selected",
    "selected",
)
# Thread-level instruction counts by op class (``<op>_thread_inst``), and the pipes whose warp
# instructions are counted (``pipe_<pipe>_inst``).
OP_CLASSES = ("ffma", "fadd", "fmul", "dfma", "dadd", "dmul", "hfma", "hadd", "hmul", "integer", "conversion")
INST_PIPES = ("fma", "fmaheavy", "alu", "fp64", "xu", "lsu", "uniform")
ACCOUNTING: dict[str, tuple[str, ...]] = {
    **{
        f"stall_{r}": (f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio",)
        for r in STALL_REASONS
    },
    "issue_active_pct": ("smsp__issue_active.avg.pct_of_peak_sustained_active",),
    # pipe utilisation, % of the pipe's peak while the SM was active
    "pipe_fma_pct": ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",),
    "pipe_alu_pct": ("sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",),
    "pipe_fp64_pct": ("sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",),
    "pipe_lsu_pct": ("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",),
    "pipe_xu_pct": ("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",),
    "pipe_shared_pct": ("sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active",),
    # instruction mix (warp-level instructions; FFMA per thread)
    "inst_executed": ("smsp__inst_executed.sum",),
    "ffma_thread_inst": ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",),
    "hmma_inst": ("sm__inst_executed_pipe_tensor_op_hmma.sum",),
    "gmma_inst": ("sm__inst_executed_pipe_tensor_op_gmma.sum",),
    # global atomics and reductions: L1 requests (warp instructions) and the L2 sectors they touch
    "global_atom_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",),
    "global_red_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",),
    "l2_atom_sectors": ("lts__t_sectors_srcunit_tex_op_atom.sum",),
    "l2_red_sectors": ("lts__t_sectors_srcunit_tex_op_red.sum",),
    # coalescing: sectors per request of global loads and stores (4 is a fully used 128-byte line for
    # 4-byte elements; 32 is one sector per thread)
    "global_ld_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",),
    "global_ld_sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",),
    "global_st_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",),
    "global_st_sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",),
    # shared memory: bank conflicts among its wavefronts
    "shared_bank_conflicts": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",),
    "shared_wavefronts": ("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",),
    # divergence: active threads per executed warp instruction (32: none)
    "threads_per_inst": ("smsp__thread_inst_executed_per_inst_executed.ratio",),
    "divergent_branch_targets": ("smsp__sass_branch_targets_threads_divergent.sum",),
    # Work per op class (issue 36: the machine model's inputs). Thread-level instructions with the
    # predicate on (one per active lane): FP64 (DFMA/DADD/DMUL run on the FP64 pipe), FP32
    # (FADD/FMUL/FFMA), FP16 (HFMA2/HADD2/HMUL2 count per instruction, two lanes of work each),
    # integer (IMAD, IADD3, ISETP, LEA, shifts: the ALU/FMA pipes' index arithmetic) and
    # conversions (F2F, I2F, F2I: a float64 kernel fed float32 data does two per element).
    **{
        f"{op}_thread_inst": (f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum",)
        for op in OP_CLASSES
        if op != "ffma"  # listed above
    },
    # Warp instructions issued to each pipe: the pipes' work, to set against their throughput per
    # SM per clock (XU: MUFU transcendentals, conversions; FP64: DFMA/DADD/DMUL, and double-precision
    # MMA on the tensor pipe as DMMA; LSU: every load/store/atomic through L1TEX and shared memory).
    **{f"pipe_{p}_inst": (f"sm__inst_executed_pipe_{p}.sum",) for p in INST_PIPES},
    "dmma_inst": ("sm__inst_executed_pipe_tensor_op_dmma.sum",),
    # local memory (spills, dynamically indexed arrays): warp-level requests to L1TEX
    "local_ld_requests": ("l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",),
    "local_st_requests": ("l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",),
    # Memory levels: utilisation of L1TEX (% of peak while the SM was active) and L2 (% of elapsed
    # peak: the slices serve every SM) (DRAM is dram_pct), and the bytes each level moved.
    "l1_pct": ("l1tex__throughput.avg.pct_of_peak_sustained_active",),
    "l2_pct": ("lts__throughput.avg.pct_of_peak_sustained_elapsed",),
    "l2_bytes": ("lts__t_bytes.sum",),
    # The L2's slices as resources of their own: the busiest slice's throughput and the L2's atomic units
    # (average and busiest slice). Addresses hash over the slices, so traffic to a few lines (a small table
    # every program reads past L1, atomics to a few counters) loads one slice while the average stays low.
    "l2_slice_pct": ("lts__throughput.max.pct_of_peak_sustained_elapsed",),
    "l2_atomic_pct": ("lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed",),
    "l2_atomic_slice_pct": ("lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed",),
    # The host link (PCIe, NVLink-C2C) as a memory level: L2 sectors the SMs' loads and stores sent to
    # system memory (a kernel reading pinned or mapped host memory: zero copy), and the link's throughput.
    "sysmem_sectors": ("lts__t_sectors_srcunit_tex_aperture_sysmem.sum",),
    "host_link_pct": ("pcie__throughput.avg.pct_of_peak_sustained_elapsed",),
    "shared_bytes": ("sm__sass_data_bytes_mem_shared.sum",),
    # SM activity: an SM's average active and elapsed cycles. Pipe % is of active cycles; times
    # active/elapsed it is of the kernel's time (idle SMs: too few blocks, the tail).
    "sm_cycles_active": ("sm__cycles_active.avg",),
    "sm_cycles_elapsed": ("sm__cycles_elapsed.avg",),
    # what limits occupancy: blocks per SM each resource allows (launch statistics, no replay pass)
    "occ_limit_registers": ("launch__occupancy_limit_registers",),
    "occ_limit_shared_mem": ("launch__occupancy_limit_shared_mem",),
    "occ_limit_warps": ("launch__occupancy_limit_warps",),
    "occ_limit_blocks": ("launch__occupancy_limit_blocks",),
}
METRICS.update(ACCOUNTING)
# Counts add up across the kernels of one stage launch; the rest are duration-weighted.
ACCOUNTING_COUNTS = (
    "inst_executed",
    "ffma_thread_inst",
    "hmma_inst",
    "gmma_inst",
    "global_atom_requests",
    "global_red_requests",
    "l2_atom_sectors",
    "l2_red_sectors",
    "global_ld_requests",
    "global_ld_sectors",
    "global_st_requests",
    "global_st_sectors",
    "shared_bank_conflicts",
    "shared_wavefronts",
    "divergent_branch_targets",
    *(
        f"{op}_thread_inst"
        for op in OP_CLASSES
        if op != "ffma"  # listed above
    ),
    *(f"pipe_{p}_inst" for p in INST_PIPES),
    "dmma_inst",
    "local_ld_requests",
    "local_st_requests",
    "l2_bytes",
    "shared_bytes",
    "sm_cycles_active",  # per-SM averages: a stage's kernels run one after another, their cycles add
    "sm_cycles_elapsed",
)

# Launch and occupancy metrics come from the launch itself, not from hardware counters, and
# are not listed by ``ncu --query-metrics``.
_NON_COUNTER_PREFIXES = ("launch__", "device__", "sm__maximum_warps_per_active_cycle")

ANNOTATION_SECTIONS = (
    "SpeedOfLight",
    "LaunchStats",
    "Occupancy",
)  # cheap sections whose rules estimate speed-ups


# ----------------------------------------------------------------------------- metric names


def parse_metric_catalog(text: str) -> set[str]:
    """Base names from ``ncu --query-metrics --csv`` output."""
    rows = csv.reader(io.StringIO(text))
    out: set[str] = set()
    for row in rows:
        if row and row[0] and row[0] != "Metric name" and not row[0].startswith("=="):
            out.add(row[0].strip())
    return out


def base_name(metric: str) -> str:
    """``sm__throughput.avg.pct_of_peak_sustained_elapsed`` -> ``sm__throughput``."""
    return metric.split(".", 1)[0]


def range_name(stage: str) -> str:
    """The NVTX range a stage's profiled launches run in."""
    return RANGE_PREFIX + stage
