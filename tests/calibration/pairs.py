"""The calibration set: pairs of kernel versions, one with a planted problem and one with that
problem fixed, plus the library's own version pairs and a near-roof GEMM.

``cause`` is the diagnosis' cause key the planted problem must be ranked first with (see
``kprof_mcp.analysis.diagnosis.opportunities``); ``None`` for a kernel with no planted problem
(the near-roof GEMM: its best opportunity must stay small) and for library pairs, whose
versions differ in several ways (only the top estimate is compared with the measured gain).
``mode`` is the mode whose contract is judged (nsys for launch overhead, which only a
timeline shows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

KERNELS_DIR = Path(__file__).resolve().parent / "kernels"


@dataclass(frozen=True)
class Pair:
    name: str
    kernel: str
    bad: str
    good: str | None
    cause: str | None
    mode: str = "annotation"
    params: dict = field(default_factory=dict)
    planted: str = ""  # what is wrong in the bad version, in words
    # A command pair: ``kernel`` is a script of commands/ run as ``python <script> --variant
    # bad|good`` through profile_command, stages its ranges; ``models`` the stages' FLOP/byte models.
    command: bool = False
    models: dict = field(default_factory=dict)
    # Issue 36: the limiter resource the diagnosis must name for the bad version (a pipe: "fp64",
    # "fma", "alu", "xu", "lsu", "tensor"; a memory level: "dram", "l2", "l1"), set from the kernel's
    # design before it was recorded.
    resource: str | None = None


PAIRS = [
    Pair(
        "strided access", "calib_transpose", "v0", "v1", "over_fetch", planted="uncoalesced (strided) access"
    ),
    Pair(
        "random gather", "calib_gather", "v0", "v1", "over_fetch", planted="one 4-byte element per random row"
    ),
    Pair("too few blocks", "calib_few_blocks", "v0", "v1", "few_blocks", planted="16 programs for 132 SMs"),
    Pair("tail effect", "calib_tail", "v0", "v1", "tail", planted="a grid of about 1.1 waves"),
    Pair(
        "register spills", "calib_spill", "v0", "v1", "spills", planted="a tile far larger than the registers"
    ),
    Pair(
        "serialised reduction",
        "calib_atomic",
        "v0",
        "v1",
        "latency",
        planted="every element atomically added to one address",
    ),
    Pair(
        "many tiny launches",
        "tiny_chain",
        "v0",
        "v2",
        "launch",
        mode="nsys",
        planted="200 tiny kernels launched one by one from Python (fix: the same kernels as one CUDA graph)",
    ),
    Pair(
        "near-roof GEMM", "matmul", "v3", None, None, params={"M": 4096, "N": 4096, "K": 4096}, planted="none"
    ),
    Pair("library: softmax v0→v2", "softmax", "v0", "v2", None, planted="three passes over each row"),
    Pair(
        "library: matmul v0→v3",
        "matmul",
        "v0",
        "v3",
        None,
        params={"M": 4096, "N": 4096, "K": 4096},
        planted="plain tiles → persistent TMA pipeline",
    ),
    Pair(
        "library: mla_decode v1→v3",
        "mla_decode",
        "v1",
        "v3",
        None,
        planted="head-grouped → shape-aware launch",
    ),
]

# Issue 26: problems that only the hardware's accounting (stall reasons, pipes, instruction mix,
# atomics, shared-memory conflicts) can name. Recorded with that accounting in
# recorded-accounting/ (record.py --pairs ...), kept apart from recorded/, which the model's
# constants were fitted on.
ACCOUNTING_PAIRS = [
    Pair(
        "GEMM on the FMA pipes",
        "calib_fma_gemm",
        "v0",
        "v1",
        "move_work",  # issue 26's fma_dot, the machine model's move of the FMA pipe's work since issue 36
        resource="fma",
        planted="fp32 tl.dot with input_precision='ieee': the dot runs on the FMA pipes, tensor cores idle",
    ),
    Pair(
        "contended atomics",
        "calib_histogram",
        "v0",
        "v1",
        "atomics",
        planted="one global atomic per element into 256 bins",
    ),
    Pair(
        "small tiles",
        "calib_small_tiles",
        "v0",
        "v1",
        "small_tiles",
        planted="32x32x32 tiles, 2 warps, 1 stage: little reuse per operand byte",
    ),
    Pair(
        "bank conflicts",
        "calib_bank_conflicts",
        "v0",
        "v1",
        "bank_conflicts",
        planted="shared-memory accesses that conflict across banks",
    ),
    # Recorded after the catalogue and the timeline accounting were fixed (2026-11-24, session 2):
    # issue 26's heavy-spill case re-created, and a healthy memory-bound kernel that must get no
    # opportunity above 15 %.
    Pair(
        "heavy spills",
        "calib_spill_tile",
        "v0",
        "v1",
        "spills",
        planted="a 64x256 fp32 tile on one warp: 512 values per thread (fix: 8 warps)",
    ),
    Pair("healthy memory-bound", "vector_add", "v1", None, None, planted="none"),
]
# Issue 26's timeline causes, on commands (profile_command in nsys mode): what the host did while
# the GPU idled, and a chain of kernels that only fusing makes fast. The measured gain of a fix is
# the wall time per step of the loop, run without a profiler (commands/_common.py).
COMMAND_PAIRS = [
    Pair(
        "sync per step",
        "sync_loop.py",
        "bad",
        "good",
        "sync",
        mode="nsys",
        command=True,
        planted="loss.item() then host work every step: the sync drains the GPU, the host work cannot overlap it",
    ),
    Pair(
        "host-bound loop",
        "host_loop.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        planted="batches made with numpy on the host each step, longer than the GPU's step",
    ),
    Pair(
        "launch-bound loop",
        "launch_loop.py",
        "bad",
        "good",
        "launch",
        mode="nsys",
        command=True,
        planted="100 tiny eager ops per step issued from Python (fix: one CUDA graph replay)",
    ),
    Pair(
        "unfused chain",
        "fused_chain.py",
        "bad",
        "good",
        "fusion",
        mode="nsys",
        command=True,
        models={"chain": {"bytes": 4.03e8, "dtype": "float32"}},
        planted="eager bias+GELU+scale+residual: 4 memory-bound kernels (fix: one Triton kernel)",
    ),
]
# Issue 36 (causes from a model of the machine): work on one pipe that another pipe (or no
# instruction at all) can do, in classes the sets above lack, walked from Nsight Compute's rules
# (pipe utilisation, instruction statistics) and the CUDA C++ Best Practices Guide (arithmetic
# instructions: precision, fast math, division; the matrix units). "move_work": the fix moves the
# limiter's work to another resource or removes it; ``resource`` is the limiter the diagnosis must
# name, set from each kernel's design (its docstring) before anything was recorded. Recorded into
# recorded-model/ (record.py --pairs ... --out tests/calibration/recorded-model).
MODEL_PAIRS = [
    Pair(
        "fp64 where fp32 suffices",
        "calib_fp64",
        "v0",
        "v1",
        "move_work",
        resource="fp64",
        planted="a 256-step FMA chain per element computed in float64 (DFMA on the FP64 pipe); fix: float32",
    ),
    Pair(
        "precise transcendentals",
        "calib_precise_math",
        "v0",
        "v1",
        "move_work",
        resource="fma",
        planted="32 libdevice sin/cos per element (range reduction + polynomial on the FMA/ALU pipes); "
        "fix: sin.approx/cos.approx on the XU pipe",
    ),
    Pair(
        "dot as multiply-and-sum",
        "calib_outer_sum",
        "v0",
        "v1",
        "move_work",
        # the design's limiter; recorded with Triton 3.6 the product is reduced across threads through
        # shared memory with spills (L1 97.7 %, LSU): see calib_outer_sum's docstring
        resource="fma",
        planted="fp16 GEMM whose K slices are summed outer products, tl.sum(a[:, :, None] * b[None, :, :], "
        "axis=1) in fp32; fix: tl.dot on the tensor cores",
    ),
    Pair(
        "integer division per element",
        "calib_int_div",
        "v0",
        "v1",
        "move_work",
        resource="alu",
        planted="6-d permute dividing each element's int64 index by 5 runtime sizes; fix: contiguous rows, "
        "coordinates once per program",
    ),
]
ALL_PAIRS = PAIRS + ACCOUNTING_PAIRS + COMMAND_PAIRS + MODEL_PAIRS
# Issue 36 (timelines by replay): commands whose causes only a replay of the recorded dependency graph
# estimates well (a sync hidden in every layer, an allocation per step, a pageable copy per step).
# Recorded into recorded-replay/ (record.py --pairs ... --out tests/calibration/recorded-replay).
REPLAY_PAIRS = [
    Pair(
        "shape sync",
        "shape_sync.py",
        "bad",
        "good",
        "sync",
        mode="nsys",
        command=True,
        planted="8 layers each selecting h[h > t] (a data-dependent shape: nonzero syncs the host every layer)",
    ),
    # The same at --n 1024 (recorded first, 2026-11-25): GPU work far shorter than the host's, so the
    # loop is launch-bound with or without the syncs and the fix measured no gain.
    Pair(
        "shape sync, launch-bound",
        "shape_sync.py",
        "bad",
        "good",
        "launch",
        mode="nsys",
        command=True,
        planted="as shape sync with 1024-wide layers: the host's launches, not the syncs, bound the step",
    ),
    Pair(
        "alloc per step",
        "alloc_loop.py",
        "bad",
        "good",
        "cuda_api",
        mode="nsys",
        command=True,
        planted="varying batch lengths with torch.cuda.empty_cache() each step: cudaMalloc/cudaFree every step",
    ),
    Pair(
        "pageable copy",
        "pageable_copy.py",
        "bad",
        "good",
        "copy",
        mode="nsys",
        command=True,
        planted="a 32 MiB batch copied from pageable numpy memory each step (fix: pinned, non_blocking, prefetched)",
    ),
]
# A held-out set (2026-11-25, helper E): four pairs in classes none of the sets above has, walked from
# Nsight Compute's rules (issue slots, instruction statistics) and the CUDA C++ Best Practices Guide
# (division, fast math, batching small work, host-device transfers). Causes and ``resource`` set from
# each design (the kernels' docstrings: SASS read with Triton 3.9 without a GPU) before recording;
# nothing of the model was chosen with them in view. Not in ALL_PAIRS: recorded into
# recorded-heldout/ (record.py --pairs ... --out tests/calibration/recorded-heldout) to judge it.
HELDOUT_PAIRS = [
    Pair(
        "IEEE division per step",
        "calib_fdiv",
        "v0",
        "v1",
        "move_work",
        resource="issue",
        planted="tl.div_rn(y + x, d) 64 times per element with a loop-invariant d (div.rn.f32: MUFU.RCP, FCHK, "
        "Newton FFMAs, a slow-path branch: ~12 instructions per step); fix: r = 1/d once, a multiply per step",
    ),
    Pair(
        "precise pow",
        "calib_pow",
        "v0",
        "v1",
        "move_work",
        resource="issue",
        planted="16 libdevice powf per element (~75 instructions each on the FMA, ALU and XU pipes); "
        "fix: fast_powf (exp2(e log2 x): two MUFU)",
    ),
    Pair(
        "per-item matmuls",
        "per_item_matmul.py",
        "bad",
        "good",
        "launch",
        mode="nsys",
        command=True,
        models={
            "matmuls": {"flops": 2.68435456e8, "bytes": 1.048576e7, "dtype": "bfloat16", "tensor_cores": True}
        },
        planted="256 small bf16 matmuls (64x128 @ 128x64) launched one per item from Python, then stacked "
        "(fix: one torch.bmm)",
    ),
    Pair(
        "host snapshot per step",
        "host_snapshot.py",
        "bad",
        "good",
        "copy",
        mode="nsys",
        command=True,
        models={
            "step": {"flops": 3.4359738368e10, "bytes": 1.216e8, "dtype": "bfloat16", "tensor_cores": True}
        },
        planted="logits.cpu() of a 32 MiB fp32 tensor every step for logging (pageable device-to-host copy and "
        "a sync; fix: keep it on the GPU, read the logged values once after the loop)",
    ),
]
COMMANDS_DIR = Path(__file__).resolve().parent / "commands"

# The accounting set (recorded-accounting/: every pair above and these, recorded on 2026-11-24 with
# the accounting counters) is judged by issue 26's rule: opportunity 1 must name the cause the fix
# removes. The serialising reduction's planted problem is its atomics, which the accounting names;
# issue 12's set (recorded/, no accounting) could only call it latency.
ACCOUNTING_CAUSE = {"serialised reduction": "atomics"}
# Which half each pair is in. "fit": a constant of the model was set from it (DRAM_SATURATED_PCT
# from the strided transpose and the random gather, _COMPUTE_ATTAINABLE_PCT from matmul v0/v3) or
# the catalogue's gates were chosen with its counters in view (the spill share, the atomics, the
# FMA GEMM, the small tiles, the near-roof GEMM). "holdout": nothing was fitted on it.
HALF = {
    "strided access": "fit",
    "random gather": "fit",
    "register spills": "fit",
    "serialised reduction": "fit",
    "GEMM on the FMA pipes": "fit",
    "small tiles": "fit",
    "library: matmul v0→v3": "fit",
    "near-roof GEMM": "fit",
    "too few blocks": "holdout",
    "tail effect": "holdout",
    "contended atomics": "holdout",
    "bank conflicts": "holdout",
    "library: softmax v0→v2": "holdout",
    "library: mla_decode v1→v3": "holdout",
    "many tiny launches": "holdout",
    # Issue 26's commands: the idle breakdown's one constant (HOST_WORK_MIN_NS, per-launch overhead
    # vs host work) was chosen with the launch-bound loop in view, and the sync cause's share with the
    # sync loop; the host-bound loop and the unfused chain were recorded after both were fixed.
    "sync per step": "fit",
    "launch-bound loop": "fit",
    "host-bound loop": "holdout",
    "unfused chain": "holdout",
    "heavy spills": "holdout",
    "healthy memory-bound": "holdout",
    # Issue 36's replay pairs: halves set before they were recorded (2026-11-25). The replay has no
    # fitted constant; the alloc loop is "fit" because the transforms' list was chosen with it in view.
    "shape sync": "holdout",
    "shape sync, launch-bound": "holdout",
    "alloc per step": "fit",
    "pageable copy": "holdout",
    # Issue 36's model pairs: halves assigned before any number of theirs was looked at (2026-11-25),
    # alternating in the order they were designed.
    "fp64 where fp32 suffices": "fit",
    # These two were assigned "holdout", but the what-if of a move of code (limiter._code_move: the freed
    # issue slots are everything the stage's model does not need) was revised after their numbers were seen
    # (2026-11-25): they are fit pairs now. recorded-heldout/ (HELDOUT_PAIRS) is the clean hold-out.
    "precise transcendentals": "fit",
    "dot as multiply-and-sum": "fit",
    "integer division per element": "fit",
    # The held-out set (HELDOUT_PAIRS): every pair "heldout", set before recording (2026-11-25).
    "IEEE division per step": "heldout",
    "precise pow": "heldout",
    "per-item matmuls": "heldout",
    "host snapshot per step": "heldout",
}
# A second held-back set (2026-11-25, a helper who did not work on the model): six pairs in classes none
# of the sets above has, walked from Nsight Compute's rules (memory workload: a narrower type;
# occupancy: the block-slot limit; uncoalesced global access on the store side) and the CUDA C++ Best
# Practices Guide (do not compute known zeros; minimise device-memory traffic; overlap transfers with
# computation through streams). Causes and ``resource`` set from each design (the packages' and
# scripts' docstrings) before recording, without reading the diagnosis; ``resource`` None where the
# design names no single busy pipe or memory level. Not in ALL_PAIRS: recorded into
# recorded-heldout2/ (record.py --pairs ... --out tests/calibration/recorded-heldout2).
HELDOUT2_PAIRS = [
    Pair(
        "fp32 I/O where bf16 suffices",
        "calib_wide_io",
        "v0",
        "v1",
        "over_fetch",
        resource="dram",
        planted="a memory-bound gated residual out = h + gate * y on a [16384, 4096] stream whose model is bf16, "
        "run on float32 copies of h, y and out: 12 bytes per element where 6 suffice (DRAM bytes = 2x the model); "
        "fix: the same kernel on the bf16 tensors (fp32 math, bf16 I/O)",
    ),
    Pair(
        "one row per one-warp program",
        "calib_row_programs",
        "v0",
        "v1",
        "occupancy",
        planted="L2-normalising 2^21 rows of 64 bf16 with one row (128 bytes) per num_warps=1 program: the SM's "
        "32 block slots cap it at 32 warps and ~4 KB of loads in flight per SM, and every 256 bytes cost a "
        "block launch; fix: 32 rows per 4-warp program",
    ),
    Pair(
        "MMAs on causal zero tiles",
        "calib_causal_gemm",
        "v0",
        "v1",
        "move_work",
        resource="tensor",
        planted="Y = P @ V with P [8192, 8192] causal (zeros above the diagonal) run as a dense tiled GEMM: half "
        "the tensor-pipe work multiplies zero tiles (the FLOP model counts the non-zeros); fix: the K loop "
        "stopped at the diagonal block (the work removed from the limiting pipe)",
    ),
    Pair(
        "uncoalesced stores",
        "calib_cast_transpose",
        "v0",
        "v1",
        "over_fetch",
        planted="an fp32 -> bf16 cast-transpose written row-wise: coalesced loads, every 2-byte store M*2 bytes "
        "from its neighbour (32 sectors per warp store; L2 merges them, so DRAM bytes stay near the model and "
        "the store path — L1 wavefronts and L2 sector writes, estimated alike — is the limit); fix: 64x64 tiles "
        "through tl.trans, coalesced stores",
    ),
    Pair(
        "layout round trip per layer",
        "layout_roundtrip.py",
        "bad",
        "good",
        "fusion",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.07e9, "bytes": 5.37e8, "dtype": "bfloat16"}},
        planted="4 LayerNorms on channels-first [16, 1024, 2048] bf16 activations, each wrapped in "
        "transpose(1, 2).contiguous() and back: two transposing copies per memory-bound kernel, 3x the stage's "
        "bytes (no cause names a redundant copy; 'fusion' is the nearest: the stage's kernels move its bytes "
        "several times over); fix: convert to channels-last once before the loop",
    ),
    Pair(
        "copy and compute on one stream",
        "serial_copy.py",
        "bad",
        "good",
        "copy",
        mode="nsys",
        command=True,
        models={"step": {"flops": 8.246e11, "bytes": 6.71e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a 64 MiB batch uploaded each step from pinned memory with non_blocking=True, but on the "
        "compute's stream: copy and GEMMs serialise (no sync, no pageable memory); fix: the next batch's copy on "
        "a side stream one step ahead (event + record_stream), overlapping the compute",
    ),
]
# A third held-back set (2026-11-26, a helper who did not work on the model and did not read the diagnosis):
# six pairs in classes none of the sets above has, walked from Nsight Compute's rules (workload imbalance
# between SMs; thread divergence; DRAM bytes far above the unique footprint)
# and the CUDA C++ Best Practices Guide (keep every multiprocessor busy; uniform control flow per warp;
# minimise device-memory traffic and reuse data on chip; the narrowest type that suffices); split-K from the
# launch statistics' small grid (a candidate with acq_rel atomics, stalls on memory barriers, was dropped at
# the quick check: its fix measured 1.04x, both versions bound by the L2's atomics). Causes and
# ``resource`` set from each design (the packages' and scripts' docstrings) before recording; ``resource``
# None where the design names no single busy pipe or memory level. Not in ALL_PAIRS: recorded into
# recorded-heldout3/ (record.py --pairs ... --out tests/calibration/recorded-heldout3).
HELDOUT3_PAIRS = [
    Pair(
        "imbalanced segments",
        "calib_segment_imbalance",
        "v0",
        "v1",
        "tail",
        planted="segment sums of a power-law ragged tensor (GNN aggregation, 65536 Zipf segments of [rows, 128] "
        "bf16) with one program per segment: the hub's 65536 rows stream through one program on one SM long "
        "after the other programs are done (a large grid, not a partial wave: 'tail' is the nearest cause, the "
        "kernel's end is a long tail in which few SMs work); fix: work items of at most 1024 rows, partial sums "
        "added with relaxed atomics",
    ),
    Pair(
        "divergent step counts",
        "calib_divergent_steps",
        "v0",
        "v1",
        "move_work",
        resource="xu",
        planted="2^21 items each advanced by its own step count (8..512, mean 145) of an XU-heavy map (ex2, "
        "rsqrt), 1024 items per program looping to the program's largest count with tl.where: every lane runs "
        "~512 steps; fix: the items sorted by step count (permutation made with the data), each program loops "
        "about as long as its items need (the XU work of finished lanes removed)",
    ),
    Pair(
        "split-K needed",
        "calib_split_k",
        "v0",
        "v1",
        "few_blocks",
        planted="a weight gradient dW = X^T @ dY with M = N = 256 and K = 65536 tokens (bf16, fp32 dW) tiled "
        "128x128 over the output only: 4 programs for 132 SMs, each looping over all 65536 tokens; fix: split-K "
        "32 (128 programs), partial tiles added with relaxed atomics",
    ),
    Pair(
        "input re-read per class",
        "calib_class_passes",
        "v0",
        "v1",
        "over_fetch",
        resource="dram",
        planted="per-class sums of a 2^27-element bf16 score map over uint8 labels (8 classes) with a grid of "
        "(chunks, classes): every chunk is read once per class, the readers a pass apart (no L2 reuse): DRAM "
        "bytes ~8x the model; fix: one program per chunk computing all 8 classes' sums in registers",
    ),
    Pair(
        "float64 by type promotion",
        "window_promotion.py",
        "bad",
        "good",
        "over_fetch",
        mode="nsys",
        command=True,
        resource="dram",
        models={"step": {"flops": 1.2e9, "bytes": 1.35e9, "dtype": "float32"}},
        planted="a log-power spectrogram front end (64 clips x 10 s, n_fft 1024, hop 256) whose Hann window "
        "came from numpy as float64: frames * window promotes the float32 frames, so the FFT runs in complex128 "
        "and the power and log in float64 before .float(): every memory-bound kernel of the step moves 2x the "
        "model's (float32) bytes; fix: the window in float32 (one .float())",
    ),
    Pair(
        "attention matrix materialised",
        "naive_attention.py",
        "bad",
        "good",
        "fusion",
        mode="nsys",
        command=True,
        models={"step": {"flops": 3.44e10, "bytes": 1.34e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="causal attention written by hand (B=16, H=16, T=1024, d=64, bf16): q @ k^T, scale, masked_fill, "
        "softmax, @ v materialise the 537 MB score matrix and move it ~8 times per step through memory-bound "
        "kernels (the stage's bytes ~30x the model's); fix: F.scaled_dot_product_attention(is_causal=True), one "
        "fused flash kernel",
    ),
]
# A fourth held-back set (2026-11-26, a helper who did not work on the model and did not read the diagnosis):
# six pairs in classes none of the sets above has, walked from Nsight Compute's rules (memory workload: DRAM
# bytes far above the footprint, from an intermediate's round trip or from an L2-thrashing launch order; pipe
# utilisation of the tensor pipe; warp stalls on memory with nothing in flight) and the CUDA C++ Best Practices
# Guide (keep intermediates on chip; the fastest arithmetic that meets the accuracy; overlap transfers with
# computation; GEMM dimensions multiples of 8; batch small kernels). Causes and ``resource`` set from each
# design (the packages' and scripts' docstrings) before recording; ``resource`` None where the design names no
# single busy pipe or memory level. Not in ALL_PAIRS: recorded into recorded-heldout4/
# (record.py --pairs ... --out tests/calibration/recorded-heldout4).
HELDOUT4_PAIRS = [
    Pair(
        "intermediate round trip",
        "calib_square_roundtrip",
        "v0",
        "v1",
        "fusion",
        resource="dram",
        planted="per-row RMS of a [16384, 8192] bf16 matrix written as a map then a reduce: x.float()**2 stored "
        "to a full-size fp32 buffer (536 MB) by one kernel and summed per row by a second: 10 bytes per element "
        "where 2 suffice (DRAM bytes ~5x the model); fix: one kernel squaring in registers inside the reduction",
    ),
    Pair(
        "operands upcast before the dot",
        "calib_upcast_dot",
        "v0",
        "v1",
        "move_work",
        # "tensor" by design (committed so in 846f431); None after the quick check, before recording: v0 ran
        # at 77 TFLOP/s, 16 % of the TF32 peak (6.9x slower, not 2x), so the TF32 rate is not its limit
        resource=None,
        planted="a bf16 GEMM (4096^3) whose loaded tiles are converted to float32 before tl.dot: the dot runs "
        "as TF32 MMAs (wgmma .tf32 k8, half the bf16 rate), every element converted and re-staged in shared "
        "memory as fp32 (205 registers per thread against 122); fix: the bf16 tiles fed to tl.dot (fp32 "
        "accumulation either way; the products are exact in both)",
    ),
    Pair(
        "no software pipelining",
        "calib_no_pipelining",
        "v0",
        "v1",
        "latency",
        planted="a bf16 GEMM (4096^3, 128x256x64 tiles: one program per SM) compiled with num_stages=1: every K "
        "step waits for its global loads before its MMAs and no other program hides the wait; fix: "
        "num_stages=3 (asynchronous copies of the next K steps in flight)",
    ),
    Pair(
        "L2-thrashing tile order",
        "calib_tile_order",
        "v0",
        "v1",
        "over_fetch",
        resource="dram",
        planted="an LM-head-shaped GEMM (M=4096, N=32768, K=4096, bf16) launched in row-major tile order: the "
        "resident programs share one row block of A but stream ~132 column blocks of B, and B (268 MB, 5x the "
        "L2) is read from DRAM again for every row block (~8.6 GB, 15x the model); fix: grouped order "
        "(GROUP_M=8)",
    ),
    Pair(
        "vocabulary not a multiple of 8",
        "lm_head_vocab.py",
        "bad",
        "good",
        None,
        mode="nsys",
        command=True,
        models={"lm_head": {"flops": 6.32e11, "bytes": 9.13e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="the logits GEMM of an LM head with GPT-2's 50257-token vocabulary (8192 tokens x 768, bf16): "
        "the output's rows are 100,514 bytes apart (not 16-byte aligned), so cuBLAS runs an unaligned, slower "
        "kernel; fix: the weight padded with zero rows to 50304 and logits[:, :50257] kept (no cause key names "
        "a library's alignment-dependent kernel choice: cause None, only the top estimate is judged)",
    ),
    Pair(
        "optimizer step per parameter",
        "optimizer_loop.py",
        "bad",
        "good",
        "launch",
        mode="nsys",
        command=True,
        models={"step": {"flops": 3.37e8, "bytes": 5.89e8, "dtype": "float32"}},
        planted="AdamW(foreach=False) over 291 fp32 tensors (21 M parameters): ~8 eager ops per tensor, 2328 "
        "small kernels per step issued one by one from Python while the GPU idles between them; fix: "
        "AdamW(fused=True)",
    ),
]
# A fifth held-back set (2026-11-26, a helper who did not work on the model and did not read the diagnosis):
# six pairs in classes none of the sets above has, walked from Nsight Compute's rules (instruction statistics
# and predication: work on masked-off lanes; launch statistics and occupancy: a persistent grid of one small
# program per SM; memory workload: L2 traffic far above the operands'; warp stalls on long scoreboard with a
# serial dependency) and the CUDA C++ Best Practices Guide (size the block to the work; enough warps to hide
# latency; keep loop-carried values in registers; expose parallelism; do not move or compute what is not
# needed). Causes and ``resource`` set from each design (the packages' and scripts' docstrings) before
# recording; ``resource`` None where the design names no single busy pipe or memory level. Not in ALL_PAIRS:
# recorded into recorded-heldout5/ (record.py --pairs ... --out tests/calibration/recorded-heldout5).
HELDOUT5_PAIRS = [
    Pair(
        "block wider than the row",
        "calib_wide_block",
        "v0",
        "v1",
        "move_work",
        resource="issue",
        planted="a row softmax over 262144 rows of 300 bf16 scores with BLOCK=4096 hard-coded (the longest row "
        "supported): 93 % of each program's lanes masked off, their loads, max, exp, sum and stores issued all "
        "the same (13.7x the issue slots the rows need); fix: BLOCK=triton.next_power_of_2(N)=512",
    ),
    Pair(
        "persistent grid of one small program per SM",
        "calib_persistent_grid",
        "v0",
        "v1",
        "occupancy",
        planted="a memory-bound SwiGLU gate (silu(g)*u over 2^27 bf16) written as a persistent grid-stride loop "
        "launched with one 4-warp program per SM (the persistent GEMM's grid): every SM busy but with 4 of its 64 "
        "warps, ~4 KB of loads in flight, each tile waiting a full memory latency (declared persistent: the "
        "grid's size is the design, its occupancy the bug; 'occupancy' is the nearest cause); fix: 8 programs "
        "per SM",
    ),
    Pair(
        "accumulator in global memory",
        "calib_global_acc",
        "v0",
        "v1",
        "over_fetch",
        # "l2" by design (1e536c9); the quick check (before recording) showed that v0's per-step load, store and
        # barrier also stopped the software pipelining of A and B (ld.global, no cp.async): part of v0's time may
        # be exposed latency. Left as designed.
        resource="l2",
        planted="D = C + A @ B (4096^3, bf16 operands, fp32 C/D) whose output tile is loaded, added to and "
        "stored back in global memory at every K step (a CTA barrier after each store): ~8.6 GB of L2 "
        "traffic for a GEMM whose operands are 0.2 GB, the DRAM bytes near the model ('over_fetch' at the L2); "
        "fix: the accumulator in registers, C loaded once before the K loop and D stored once after it",
    ),
    Pair(
        "recurrence walked step by step",
        "calib_serial_scan",
        "v0",
        "v1",
        "latency",
        planted="a diagonal linear recurrence h_t = a_t h_{t-1} + x_t over [8, 4096, 2048] bf16 (RG-LRU / SSM "
        "scan), one program per 128 channels looping over the 4096 steps: each step's loads issued after the "
        "previous step's update and store, one memory latency per step with ~4 warps per SM; fix: 32-step "
        "chunks loaded as tiles and solved with tl.associative_scan, the carry passed between chunks",
    ),
    Pair(
        "KV cache grown by concatenation",
        "kv_cache_cat.py",
        "bad",
        "good",
        "fusion",
        mode="nsys",
        command=True,
        resource="dram",
        models={"decode": {"flops": 8.61e9, "bytes": 8.62e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="8 decoded tokens per step (batch 32, 32 heads of 128, a 2048-token prompt, bf16) with the KV "
        "cache grown by torch.cat at every token: the whole 1.07 GB cache copied into a new one per token "
        "before attention reads it (~3x the stage's bytes; no cause names a redundant copy, 'fusion' is the "
        "nearest as for the layout round trip: the stage's kernels move its bytes several times over); fix: "
        "the cache preallocated at its final length, each token written into its slot",
    ),
    Pair(
        "logits for every position",
        "lm_head_all_positions.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        resource="tensor",
        models={"lm_head": {"flops": 2.10e9, "bytes": 2.63e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a prefill's LM head (8 prompts of 1024 tokens, width 4096, vocabulary 32000, bf16) run over "
        "all 8192 positions and sliced to the last afterwards, lm_head(h)[:, -1]: a 2.1 TFLOP GEMM and 524 MB "
        "of logits for the 8 rows used (the model counts the needed work: the tensor-pipe work removed by the "
        "fix); fix: lm_head(h[:, -1])",
    ),
]
# A sixth held-back set (2026-11-26, a helper who did not work on the model and did not read the diagnosis):
# six pairs in classes none of the sets above has, walked from Nsight Compute's rules (pipe utilisation: the
# tensor pipe busy with error-compensation MMAs; memory workload: L1 traffic far above the DRAM bytes, DRAM
# bytes far above the work's; instruction statistics and issue slots: integer work computed four times) and
# the CUDA C++ Best Practices Guide (the fastest arithmetic that meets the accuracy; reuse data on chip; do
# not move bytes that cannot change the result; share what can be shared; keep host-side preparation off the
# critical path; batch many small transfers into one). Causes and ``resource`` set from each design (the
# packages' and scripts' docstrings) before recording; ``resource`` None where the design names no single
# busy pipe or memory level. Not in ALL_PAIRS: recorded into recorded-heldout6/ (record.py --pairs ... --out
# tests/calibration/recorded-heldout6).
HELDOUT6_PAIRS = [
    Pair(
        "3xTF32 where TF32 suffices",
        "calib_tf32x3",
        "v0",
        "v1",
        "move_work",
        resource="tensor",
        planted="an fp32 GEMM (4096^3) whose tl.dot asks for input_precision='tf32x3': each fp32 operand split "
        "into a TF32 part and a TF32 remainder and three TF32 MMAs issued per product (~3x the tensor-pipe work, "
        "1e-6 accuracy where 1e-3 is accepted); fix: input_precision='tf32' (one MMA per product)",
    ),
    Pair(
        "window re-read for every output",
        "calib_window_sum",
        "v0",
        "v1",
        "over_fetch",
        resource="l1",
        planted="a causal rolling sum over the last 64 samples of 16384 float32 channels of 4096 samples, "
        "computed directly: 64 shifted, misaligned, masked loads per output, 63 of them re-reading from L1 what "
        "the program loaded before (64x the model's bytes through L1, DRAM bytes near the model: 'over_fetch' "
        "at the L1); fix: the running sum, cumsum(x[t] - x[t - 64]) (two loads per output)",
    ),
    Pair(
        "KV cache read to its capacity",
        "calib_cache_capacity",
        "v0",
        "v1",
        "over_fetch",
        resource="dram",
        planted="decode attention (32 sequences x 32 heads of 128, bf16) over a static KV cache of 4096 slots "
        "of which each sequence has filled 768..1279, the loop written over the whole capacity (for CUDA-graph "
        "capture) with the unfilled slots' scores masked to -inf: every program streams its head's whole cache "
        "slice, DRAM bytes ~4x the model's; fix: the loop bounded by the sequence's length, read in the kernel",
    ),
    Pair(
        "Philox block per element",
        "calib_philox_dropout",
        "v0",
        "v1",
        "move_work",
        resource="issue",
        planted="dropout (p = 0.1) over 2^27 bf16 whose random stream gives four values per Philox4x32-10 "
        "counter, written per element: every element runs its counter's whole 10-round Philox "
        "(tl.randint4x) and keeps one of the four outputs, 4x the integer multiply/xor work, the issue slots "
        "the limit; fix: one tl.randint4x per counter, its four outputs interleaved into the four elements",
    ),
    Pair(
        "tensor built from Python lists per step",
        "tensor_from_lists.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 5.50e11, "bytes": 1.75e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="an evaluation loop (64 x 2048 token ids, embedding and a residual MLP of width 512, bf16) whose "
        "batches are Python lists turned into a tensor every step with torch.tensor(batch, device='cuda'): the "
        "host walks 131072 Python ints (several ms) while the GPU, whose step is shorter, idles; fix: the "
        "dataset converted to a pinned tensor once before the loop, each batch sliced and copied non_blocking",
    ),
    Pair(
        "per-sample host-to-device copies",
        "per_sample_copy.py",
        "bad",
        "good",
        "copy",
        mode="nsys",
        command=True,
        models={"step": {"flops": 5.50e11, "bytes": 2.42e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a batch of 256 per-sample CPU tensors (1024 int64 token ids each, as a Dataset returns them) "
        "moved to the GPU one by one, torch.stack([s.to('cuda') for s in samples]): 256 small pageable "
        "host-to-device copies per step, each with its fixed cost and a wait for the stream, the GPU idle "
        "between them; fix: torch.stack(samples).to('cuda'), one 2 MB copy",
    ),
]
# A seventh held-back set (2026-11-26, a helper who did not work on the model and did not read the diagnosis):
# six pairs in classes none of the sets above has, walked from the CUDA C++ Best Practices Guide ("Zero
# copy": mapped host memory suits data read once, not data read at every call; "Instruction optimization":
# use the hardware's intrinsic, do the least work that gives the result, do not repeat in every block work
# whose result is shared; CUDA Graphs: instantiate once, launch many times) and Nsight Compute's rules
# (memory workload: loads served from system memory; instruction statistics and pipe utilisation: the ALU
# pipe and the issue slots spent on emulated or redundant work). Causes and ``resource`` set from each design
# (the packages' and scripts' docstrings) before recording; ``resource`` None where the design names no single
# busy pipe or memory level. Not in ALL_PAIRS: recorded into recorded-heldout7/ (record.py --pairs ... --out
# tests/calibration/recorded-heldout7).
HELDOUT7_PAIRS = [
    Pair(
        "embedding table read from pinned host memory",
        "calib_host_table",
        "v0",
        "v1",
        "copy",
        planted="an embedding lookup (8192 token ids, a 32000 x 4096 bf16 table) whose table is a pinned CPU "
        "tensor read by the kernel over PCIe (zero-copy) at every call, though it fits in the GPU's memory: 67 MB "
        "crossing the host link per call; no GPU pipe or memory level busy (resource None; 'copy' is the nearest "
        "cause: a host-device transfer repeated per call instead of made once); fix: the table's device copy, "
        "made once",
    ),
    Pair(
        "full sort where a max suffices",
        "calib_sort_top1",
        "v0",
        "v1",
        "move_work",
        resource="issue",
        planted="a top-1 MoE router (131072 tokens x 256 experts, bf16) that sorts every token's 256 (score, "
        "index) keys with tl.sort (a 36-round bitonic network of exchanges, compares and selects) to take the "
        "largest; the integer and exchange instructions fill the issue slots (no single pipe at its peak); fix: "
        "tl.max over the same keys (one reduction)",
    ),
    Pair(
        "popcount computed bit by bit",
        "calib_popcount",
        "v0",
        "v1",
        "move_work",
        resource="alu",
        planted="Hamming distances of 256-bit codes (4 queries x 2^23 database codes) whose popcount is a "
        "32-step (v >> b) & 1 sum per word (~96 shift/logic/add instructions where one POPC does it), the ALU "
        "pipe saturated; fix: libdevice.popc",
    ),
    Pair(
        "segment start recomputed by every program",
        "calib_segment_prefix",
        "v0",
        "v1",
        "move_work",
        resource="issue",
        planted="jagged mean pooling (16384 segments of 1..511 tokens x 128 bf16 features) where each program "
        "finds its start by summing the lengths of all earlier segments in a runtime scalar loop: S^2/2 = 134 M "
        "iterations run by 4 warps each, issue slots spent on a uniform loop (no single pipe at its peak); fix: "
        "the start read from offsets computed once",
    ),
    Pair(
        "matrix chain in the costly order",
        "projector_order.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        resource="tensor",
        models={"step": {"flops": 6.90e10, "bytes": 1.63e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a low-rank subspace removed from 16384 x 4096 bf16 activations in 4 layers as h - h @ (U @ "
        "U.T) (U 4096 x 64): a 4096 x 4096 projector built and a 550 GFLOP GEMM per layer, where h - (h @ U) @ "
        "U.T is two 8.6 GFLOP GEMMs (the model counts the needed work: the tensor-pipe work removed by the "
        "fix); fix: the parentheses moved",
    ),
    Pair(
        "CUDA graph captured every step",
        "graph_recapture.py",
        "bad",
        "good",
        "cuda_api",
        mode="nsys",
        command=True,
        models={"step": {"flops": 5.37e8, "bytes": 6.97e7, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a decode-style step (16 residual blocks over 8 tokens of width 1024, bf16, ~100 small kernels) "
        "run as a CUDA graph that is captured (capture_begin/capture_end, one memory pool) and instantiated "
        "again at every step: each step pays ~100 launches into the capture, cudaGraphInstantiate and the old "
        "graph's destruction while the GPU idles (the CUDA API calls' host time: 'cuda_api'); fix: the graph "
        "captured once before the loop, replayed each step",
    ),
]
# A held-back MULTI-RANK set (issue 39, 2026-11-26, a helper who did not work on the ranks' analysis and did not
# read the diagnosis): four 2-rank command pairs (torch.multiprocessing.spawn, NCCL on two GPUs, one GPU a
# rank; gloo on the CPU for the tests), each a bad job with one planted multi-GPU problem and its fix, walked
# from PyTorch's distributed notes (DDP's gradient buckets: one collective per bucket, not per parameter;
# FSDP's forward prefetch: the next layer's all-gather issued while this layer computes; DistributedSampler:
# indices dealt out in turn so the ranks' shards are even) and the usual straggler by host work (one rank
# preparing everyone's data). Each script times rank 0 after a barrier per round. Causes free text for ranks
# (``planted`` says what the diagnosis should name; ``cause`` the nearest of straggler, exposed_comm, launch,
# host, copy, sync), set from each design before any GPU number. ``models`` only where the step's work is one
# rank's clean GEMM count (not for launch- or host-bound steps, nor for ranks of unequal work). All in nsys
# mode: an event-mode command through record.py's Engine runs confined, without TCP, and the ranks could not
# reach each other (recorded-heldout-ranks/README.md). Not in
# ALL_PAIRS: recorded into recorded-heldout-ranks/ (record.py --pairs ... --out
# tests/calibration/recorded-heldout-ranks).
HELDOUT_RANKS_PAIRS = [
    Pair(
        "gradients all-reduced one parameter at a time",
        "ranks_small_allreduce.py",
        "bad",
        "good",
        "launch",
        mode="nsys",
        command=True,
        planted="small collectives: a hand-written data-parallel loop (2 ranks, 64 residual LayerNorm/Linear "
        "blocks of width 256, 4096 tokens a rank, bf16) that averages its 256 gradients one tensor at a time "
        "(the PyTorch tutorial's average_gradients: all_reduce, then /= world), 256 NCCL all_reduce calls (192 "
        "of 512 bytes) and 256 divisions a step, each paying the c10d call or the launch and the collective's "
        "latency while the GPU has little else to do (the same on both ranks: no straggler); fix: the "
        "gradients bucketed into one flat buffer, one all_reduce of 8.6 MB and one division",
    ),
    Pair(
        "sharded weights gathered just before each layer",
        "ranks_exposed_gather.py",
        "bad",
        "good",
        "exposed_comm",
        mode="nsys",
        command=True,
        models={"step": {"flops": 2.20e12, "bytes": 7.25e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="exposed communication: a ZeRO-3/FSDP-style forward (2 ranks, 16 layers of an 8192 x 8192 bf16 "
        "weight, half the rows on each rank, 1024 tokens a rank) that all-gathers each layer's weight (64 MB "
        "received a rank) with a blocking all_gather_into_tensor just before the layer's GEMM: gather and GEMM "
        "alternate, the communication not overlapped by any compute (both ranks alike); fix: the next layer's "
        "gather issued early (async_op=True, a second buffer) and waited for just before its layer, "
        "overlapping the current layer's GEMM",
    ),
    Pair(
        "one rank prepares every rank's batch on the host",
        "ranks_host_straggler.py",
        "bad",
        "good",
        "straggler",
        mode="nsys",
        command=True,
        planted="a straggler by host work: rank 1 (the 'data rank') masks and collates the whole global batch "
        "in a Python loop over its 16384 tokens every step (MLM masking) and broadcasts it; rank 0 has no host "
        "work and waits in the broadcast for rank 1; the GPU step (~1.7 ms) is shorter than the host's work, so "
        "rank 1's host is the critical path (the batches copied from pinned memory without blocking in both "
        "variants); fix: each rank masks and collates its own half (8192 tokens), no broadcast",
    ),
    Pair(
        "length-sorted batch split into contiguous halves",
        "ranks_uneven_shards.py",
        "bad",
        "good",
        "straggler",
        mode="nsys",
        command=True,
        planted="a straggler by more GPU work: variable-length sequences packed without padding, the global "
        "batch sorted by length and split into contiguous halves, so rank 1 always trains on the 16 longest "
        "(~29 K tokens: 4 residual MLP layers of width 1024 and a tied 8192-vocabulary head, bf16) and rank 0 on "
        "the 16 shortest (~1.5 K tokens); rank 0 waits at the gradients' all_reduce for rank 1's longer compute "
        "(no host cause); fix: the sorted batch dealt out in turn (order[rank::world]), ~15 K tokens a rank",
    ),
]
# An eighth held-back set (2026-11-26, a helper who did not work on the model and did not read the diagnosis):
# five pairs in classes none of the sets above has, walked from the CUDA C++ Best Practices Guide ("Memory
# optimizations": data shared by several blocks is read once per block, through L2; "Instruction
# optimization": do the least work that gives the result), the Triton tutorials (tl.dot for products, gathers
# for lookups) and PyTorch's performance notes (autocast casts its inputs at every call; anomaly detection is a
# debugging aid, slow by design). Causes and ``resource`` set from each design (the packages' and scripts'
# docstrings) before recording; ``resource`` None where the design names no single busy pipe or memory level.
# A sixth pair (an embedding bag summed one row at a time, 'latency') was dropped after the quick check found its
# loop at 2.4 TB/s and the fix slower (recorded-heldout8/README.md). Not in ALL_PAIRS: recorded into
# recorded-heldout8/ (record.py --pairs ... --out tests/calibration/recorded-heldout8).
HELDOUT8_PAIRS = [
    Pair(
        "K/V of a head group re-read by every query head",
        "calib_gqa_decode",
        "v0",
        "v1",
        "over_fetch",
        resource="l2",
        planted="grouped-query decode attention (64 sequences x 8 KV heads of 128 shared by 8 query heads each, "
        "2048 cached tokens, bf16) with one program per query head: the 8 programs of a group stream the same "
        "K/V slice, 7 of the 8 reads served by L2 (L2 bytes ~8x the model's, DRAM bytes near it: 'over_fetch' "
        "at the L2); fix: one program per KV head computing its 8 query heads from one read of K/V",
    ),
    Pair(
        "bucket index by a linear scan of the boundaries",
        "calib_bucketize",
        "v0",
        "v1",
        "move_work",
        resource="alu",
        planted="bucketize (2^25 float32 values into 256 bins by 255 sorted boundaries, torch.bucketize(right="
        "True)) written as a scan over every boundary, cnt += x >= b[j]: 255 compares and adds per value where 8 "
        "suffice, the compares and selects filling the ALU pipe; fix: a branch-free binary search (8 steps, the "
        "boundaries gathered from L1)",
    ),
    Pair(
        "gather written as a one-hot matrix product",
        "calib_onehot_gather",
        "v0",
        "v1",
        "move_work",
        resource="tensor",
        planted="a VQ codebook lookup (131072 codes into a 2048 x 256 bf16 codebook) written as one_hot(ids) @ "
        "codebook, as TPU-minded code does: a tiled tl.dot over the whole codebook, 2*N*V*D = 1.4e11 tensor FLOPs "
        "where the result needs none (the model counts the gather's bytes); fix: the rows gathered, "
        "codebook[ids]",
    ),
    Pair(
        "autograd anomaly detection left on",
        "anomaly_mode.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 8.25e11, "bytes": 3.6e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a training loop (16 residual blocks LayerNorm/Linear/GELU/Linear of width 1024 over 4096 tokens, "
        "bf16) run under torch.autograd.set_detect_anomaly(True), left on after debugging: every forward op "
        "records its Python stack (traceback formatting on the host) and every backward node's outputs are checked "
        "for NaN with a device-to-host read; the host, not the GPU, sets the step's time (the per-node syncs the "
        "other reading: 'sync'); fix: anomaly detection off",
    ),
    Pair(
        "weights re-cast by autocast at every step",
        "autocast_recast.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        resource="dram",
        models={"step": {"flops": 3.44e10, "bytes": 2.15e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a decode-style inference loop (16 tokens through 4 Linear layers of 16384 x 16384) whose weights "
        "are kept in fp32 and each step runs under torch.autocast(bfloat16): every F.linear casts its 1 GB fp32 "
        "weight to a fresh bf16 copy (read 1 GB, write 512 MB) before the GEMM reads it, ~4x the DRAM bytes the "
        "step needs, at every step; fix: the weights cast to bf16 once before the loop, no autocast (widened "
        "from 16 layers of 4096 after the quick check found that step host-bound, casts hidden)",
    ),
]

# The ninth held-back set (issue 36): five pairs in classes none of the other sets has, designed by a helper who
# did not read the diagnosis, causes and resources set from the designs before any GPU number. Not in
# ALL_PAIRS: recorded into recorded-heldout9/ (record.py --pairs ... --out tests/calibration/recorded-heldout9).
HELDOUT9_PAIRS = [
    Pair(
        "activations saved for a backward that never runs",
        "calib_saved_acts",
        "v0",
        "v1",
        "over_fetch",
        resource="dram",
        planted="inference bias + GELU(tanh) of a 16384 x 8192 bf16 activation through the fused training kernel, "
        "which also stores the pre-activation and the tanh term in fp32 for a backward that never runs: 10 bytes "
        "written an element where 2 suffice, DRAM bytes 3x the model's (dead stores); fix: the same kernel with "
        "SAVE=False, y alone stored",
    ),
    Pair(
        "a sine and a cosine per harmonic",
        "calib_fourier_terms",
        "v0",
        "v1",
        "move_work",
        resource="fma",
        planted="a 64-term Fourier series at 2^23 float32 points written as its formula, tl.sin(k x) and tl.cos(k "
        "x) for every harmonic: 128 precise libdevice sinf/cosf a point (range reduction and polynomial on the FMA "
        "pipe) where sin(x), cos(x) once and the angle-addition rotation (4 FP32 operations a harmonic) give "
        "the same series; fix: the recurrence",
    ),
    Pair(
        "a reused lookup table loaded past L1",
        "calib_lut_bypass",
        "v0",
        "v1",
        "over_fetch",
        resource="l2",
        planted="blockwise 8-bit dequantisation code[q] * absmax of 2^27 codes whose author put "
        "cache_modifier='.cg' on every load, the 1 KB code table's gather too: every lookup an L2 request (ld.global"
        ".cg, ~0.6 sectors an element on 8 hot lines) where the table would sit in L1; L2 bytes ~6x the model's "
        "('over_fetch' at the L2; the hot lines' slices the other reading); fix: the table gathered through L1",
    ),
    Pair(
        "data loading on the training loop's thread",
        "dataloader_workers.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 3.9e10, "bytes": 2.85e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a training loop (a 3-layer bf16 MLP classifier on batches of 256 augmented 3x56x56 images) whose "
        "DataLoader runs with num_workers=0: every sample's decode and augmentation (numpy, ~0.1 ms) on the loop's "
        "own thread between the steps, ~25 ms of host work for ~0.3 ms of GPU work; fix: 8 persistent workers "
        "prefetching",
    ),
    Pair(
        "dense gradient of a sparsely used embedding table",
        "embedding_dense_grad.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        resource="dram",
        models={"step": {"flops": 1.64e9, "bytes": 2.2e7, "dtype": "float32", "tensor_cores": False}},
        planted="a recommender training step looking up 16384 rows of an 8M x 64 fp32 nn.Embedding with dense "
        "gradients (sparse=False): a 2 GB zero-filled gradient and an SGD pass reading and rewriting the whole "
        "table every step, ~8 GB of DRAM traffic for 16384 rows' update; fix: sparse=True (a sparse gradient, "
        "SGD updating the looked-up rows)",
    ),
]

# The tenth held-back set (issue 36): five pairs in classes none of the other sets has, built blind to the
# diagnosis; causes and resources set from each design (the packages' and scripts' docstrings) before any
# GPU number. Not in ALL_PAIRS or HALF.
HELDOUT10_PAIRS = [
    Pair(
        "pages found by following a linked list",
        "calib_page_chain",
        "v0",
        "v1",
        "latency",
        planted="256 sequences' 1024 scattered 256-value fp16 pages gathered into a contiguous buffer by walking "
        "the allocator's next-page list: each page's address known only when the previous next[] load returns, "
        "one dependent memory round trip (~0.7-1 µs) per 512-byte page per program, ~0.16 TB/s in flight for "
        "256 programs; fix: the page table, 32 page ids loaded at once and their pages fetched together",
    ),
    Pair(
        "output read back to be multiplied by beta = 0",
        "calib_beta_zero",
        "v0",
        "v1",
        "over_fetch",
        resource="dram",
        planted="a 16384 x 16384 fp16 rank-1 update written in the general BLAS form C = alpha x y^T + beta C and "
        "called with beta = 0 to build a fresh matrix: every element of C loaded before it is overwritten, DRAM "
        "bytes 2x the model's (dead reads); fix: the beta = 0 specialisation, C only written",
    ),
    Pair(
        "position bias read from a materialised tensor",
        "calib_alibi_bias",
        "v0",
        "v1",
        "over_fetch",
        resource="dram",
        planted="flash attention (B 2, H 16, S 4096, D 64, fp16) with a symmetric ALiBi bias -slope_h |i - j| "
        "loaded per score tile from a materialised [B, H, S, S] float32 tensor: 2.1 GB a call, ~27x the bytes of "
        "Q, K, V and O, 64 GEMM FLOPs per bias byte (under the ~300 FLOP/B ridge); fix: the bias computed in "
        "registers from the indices and the head's slope",
    ),
    Pair(
        "gradients computed for a frozen backbone",
        "frozen_backbone.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        resource="tensor",
        models={"step": {"flops": 6.2e11, "bytes": 2.6e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a classifier head (2048 -> 1024) trained on 8192 tokens of a frozen 8-block bf16 backbone (Linear "
        "2048 x 2048 each) whose weights were left with requires_grad=True, the optimizer given only the head: "
        "every backward also computes the backbone's weight and input gradients (~2x the backbone forward's "
        "GEMMs) that are never used; fix: backbone.requires_grad_(False)",
    ),
    Pair(
        "kernel launches made blocking by CUDA_LAUNCH_BLOCKING",
        "launch_blocking.py",
        "bad",
        "good",
        "sync",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.65e12, "bytes": 6.9e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a training step of 16 bf16 residual MLP blocks on 8192 tokens (~200 kernels) run with "
        "CUDA_LAUNCH_BLOCKING=1 left in the environment from a debugging session: every launch call returns "
        "only when its kernel has finished, the host cannot run ahead and the GPU idles between kernels "
        "(launch, run and completion wait in series for each kernel); fix: the variable unset (asynchronous "
        "launches); revised after the quick check: 8192 tokens, not 2048 (there the good step was host-bound "
        "with ~1 ms of GPU work, and the bad one only 1.38x slower)",
    ),
]

# The eleventh held-back set (recorded-heldout11/README.md): five classes none of the other sets has, built by a
# helper who did not read the diagnosis; causes and resources set from the designs before any GPU number.
HELDOUT11_PAIRS = [
    Pair(
        "programs launched for the capacity, most exit at once",
        "calib_capacity_grid",
        "v0",
        "v1",
        "small_tiles",
        planted="a MoE dispatch (out[i] = x[src[i]] * gate[i], 256 fp16 values a row) whose live row count (65536) "
        "is on the device, launched with one 4-warp program per 8-row tile of the expert's capacity (2^21 rows): "
        "262144 programs, 1/32 with rows; the other ~254000 are scheduled, load the count, find their tile past it "
        "and exit (~120 rounds of 16 empty programs per SM), the fixed per-program cost dominating; fix: a "
        "persistent grid (4 programs per SM) looping over the live tiles, the count still read on the device",
    ),
    Pair(
        "atomic adds where each output has one writer",
        "calib_atomic_epilogue",
        "v0",
        "v1",
        "atomics",
        planted="a rank-64 product C = A B (M = N = 8192, fp16 in, fp32 out: 268 MB of output, 8.6 GFLOPs) with the "
        "split-K epilogue run at SPLIT_K = 1: C zeroed by a memset, then every element tl.atomic_add-ed (one fp32 "
        "atomic per element, acq_rel, no other writer): each line of zeros fetched back into the L2 to be added "
        "to and written again, ~3x the model's DRAM bytes, every element through the L2's atomic units; fix: "
        "tl.store, no memset (resource None: the L2's atomic units or the DRAM, not one sure level)",
    ),
    Pair(
        "hash table probed at a 97 % load factor",
        "calib_hash_probe",
        "v0",
        "v1",
        "latency",
        planted="2^23 int32 keys looked up in a linear-probing table sized to the keys plus 3 % (load 0.97): ~17 "
        "probes a lookup on average, the slowest of a program's 128 lanes in the tens to hundreds, each probe a "
        "dependent load whose key must be compared before the next is issued, the program looping until its "
        "longest run ends; fix: the same keys in a table of 2N slots (load 0.5, ~1.5 probes); revised after the "
        "quick check (nothing recorded before): a mixing hash (fmix32, multiply-shift) and 8-byte key-value slots, "
        "the first design's hash being a bijection at the fix's 2^24 slots (no collisions: a perfect hash)",
    ),
    Pair(
        "random numbers drawn on the CPU and copied every step",
        "host_randn.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 9.8e11, "bytes": 1.0e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a denoiser training step (16 images 3 x 256 x 256, patchified to 4096 tokens, an MLP 768 -> 4096 "
        "x 3 -> 768 in bf16, ~2 ms of GPU work) whose noise (3.1M values) and timesteps are drawn with "
        "torch.randn(shape).to(device): the CPU's generator fills them while the GPU has finished the last step, "
        "then a pageable 12.6 MB copy; the GPU waits on the host (the copy the other, smaller share); fix: "
        "torch.randn(..., device='cuda', generator=...)",
    ),
    Pair(
        "half-dense matrix multiplied as a sparse tensor",
        "sparse_half_dense.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 3.4e10, "bytes": 1.1e8, "dtype": "float32", "tensor_cores": False}},
        planted="inference through 2 fp32 layers Z = W2 relu(W1 X) (W 2048 x 2048 magnitude-pruned to 50 %, X 2048 "
        "x 2048 tokens) with the pruned weights stored as sparse CSR tensors: each product a cuSPARSE SpMM "
        "walking 2.1M nonzeros and gathering rows of X by column index, many times slower than the dense FP32 "
        "GEMM that multiplies the zeros too; fix: the weights kept dense (resource None: the sparse kernel's "
        "limiter not known by design)",
    ),
]


# Issue 36, the twelfth held-back set (tests/calibration/recorded-heldout12/README.md): five pairs in classes
# none of the other sets has, built (three Triton packages, two command scripts) by a helper who did not read
# the diagnosis; causes and resources set from the designs before any GPU number. Not in ALL_PAIRS or HALF.
HELDOUT12_PAIRS = [
    Pair(
        "a rare slow path evaluated for every element",
        "calib_rare_branch",
        "v0",
        "v1",
        "divergence",
        planted="a two-path function of 2^24 fp32 values (a cheap polynomial for |x| < 2.625, a 512-term FMA "
        "series for the 0.87 % tail) written as tl.where(tail, series(x), poly(x)): both operands evaluated for "
        "the whole tile, as a divergent warp runs both paths, so every value pays the series (8.6 G FMAs) that "
        "1 % need; fix: the same program stores the polynomial, compacts its tail values' indices (cumsum into "
        "a scratch list) and runs the series on those only (resource fma: the series' FMAs are the time)",
        resource="fma",
    ),
    Pair(
        "a scan whose programs wait in a chain for their predecessor's prefix",
        "calib_chained_scan",
        "v0",
        "v1",
        "latency",
        planted="a single-pass exclusive prefix sum of 2^24 int32 counts in 4096 tiles (tile ids from an atomic "
        "counter, each tile's status one int64 word) written as the chained scan: tile t spins until tile t-1 "
        "has published its inclusive prefix, then publishes its own, so the 4096 prefixes are found one after "
        "another, one inter-program round trip each, while the other programs spin; fix: decoupled look-back "
        "(each tile publishes its aggregate at once and sums its predecessors' until it reads an inclusive "
        "prefix); replaces calib_csr_scalar (a CSR row walked one nonzero at a time, 1.20x in the first call's "
        "quick check: Triton pipelined the scalar loop), designed and committed before its GPU number",
    ),
    Pair(
        "scatter-add atomics with acquire-release ordering",
        "calib_atomic_order",
        "v0",
        "v1",
        "atomics",
        planted="GNN aggregation out[dst[e], :] += w[e] x[src[e], :] (2^22 edges, 32 features, out 16 MB fp32 in "
        "the L2) with tl.atomic_add at Triton's default sem='acq_rel': each atomic fenced on both sides (earlier "
        "accesses complete first, the return awaited and the L1 invalidated before later ones), so a program's "
        "8 chunks of gathers and atomics run one round trip after another; fix: sem='relaxed' (the sums are read "
        "only after the kernel), the same atomics (resource None: the waits are round trips)",
    ),
    Pair(
        "images sent to the GPU as float32 instead of uint8",
        "float_images.py",
        "bad",
        "good",
        "copy",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.3e10, "bytes": 8.0e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="an image classifier's step (512 images 3 x 128 x 128, cut into 8 x 8 patches, a linear patch "
        "embedding to 128, a linear head, bf16 autocast, backward, SGD) whose batches are normalised to float32 on the host "
        "(ToTensor + Normalize) and copied pinned and non_blocking: 100.7 MB over PCIe a step where the uint8 "
        "pixels are 25.2 MB, the compute waiting for the copy on the stream; fix: the uint8 batch copied and "
        "converted/normalised on the GPU (the same arithmetic); revised after the first call's quick check (1.35x "
        "there: a convolutional model of ~2.3 ms a step hid the copies), the model made lighter, the copies "
        "and the cause unchanged",
    ),
    Pair(
        "an LSTM unrolled over LSTMCell in Python",
        "lstm_cell_loop.py",
        "bad",
        "good",
        "launch",
        mode="nsys",
        command=True,
        models={"step": {"flops": 2.1e10, "bytes": 2.0e8, "dtype": "float32", "tensor_cores": False}},
        planted="a one-layer LSTM (batch 32, T = 256, 128 -> 256, fp32, TF32 off) trained with nn.LSTMCell called "
        "once per time step in a Python loop: ~3 small kernels forward and ~6 backward a time step (GEMMs of 32 "
        "x 1024 outputs, the fused cell), a few µs of GPU work each, the host's module calls and launches "
        "setting the step; fix: nn.LSTM (cuDNN's fused RNN) with the same weights on the whole sequence",
    ),
]

# The thirteenth held-back set (tests/calibration/recorded-heldout13/README.md): five classes none of the other sets
# has, designed and committed (cause, resource, planted) before any GPU number; not in ALL_PAIRS or HALF.
HELDOUT13_PAIRS = [
    Pair(
        "a separable filter applied as a full 2-D stencil",
        "calib_separable_filter",
        "v0",
        "v1",
        "move_work",
        planted="a 15 x 15 Gaussian blur of an 8192 x 8192 fp32 image computed from its 2-D kernel (the outer "
        "product of a 1-D Gaussian with itself): 225 shifted-tile loads (L1/L2 hits) and FMAs an output; fix: "
        "the separable form, a row pass of 15 taps into a scratch image and a column pass of 15 taps (30 an "
        "output, the scratch image's 0.5 GB of DRAM traffic more); the same result by a cheaper method "
        "(resource l1: the taps' loads run on the L1/LSU path now)",
        resource="l1",
    ),
    Pair(
        "a root found by bisection where Newton converges in a few steps",
        "calib_kepler_bisect",
        "v0",
        "v1",
        "move_work",
        planted="Kepler's equation E - e sin E = M for 2^24 orbits (e <= 0.8) solved by 48 bisection steps on "
        "[M - e, M + e], each a libdevice sine (range reduction and polynomial on the FP32 pipe); fix: Danby's "
        "starting value and 6 Newton steps (a sine, a cosine and a division each): the same fp32 root by a "
        "quadratically converging method (resource fma: the sines' FP32 work is the time)",
        resource="fma",
    ),
    Pair(
        "a float atomic max emulated with a compare-and-swap loop",
        "calib_cas_max",
        "v0",
        "v1",
        "atomics",
        planted="scatter-max of 2^24 fp32 values into 2^16 segments (256 writers a segment, the output in the "
        "L2) written as CUDA code writes a float atomicMax: load the word, atomic_cas the max in, retry until "
        "every lane of the tile has succeeded (a returned-value round trip a try, failed tries under "
        "contention), both versions sem='relaxed'; fix: tl.atomic_max (native: one fire-and-forget red a value); "
        "resource None (the waits are round trips)",
    ),
    Pair(
        "an FFT convolution at a prime length",
        "fft_prime_length.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 2.2e9, "bytes": 6.0e8, "dtype": "float32", "tensor_cores": False}},
        planted="a long-convolution layer (8 x 512 channels x 4096 steps, a 4096-tap filter a channel, fp32, "
        "inference) computed as irfft(rfft(u, n) * rfft(k, n), n) with n = L + M - 1 = 8191, a prime: cuFFT "
        "runs Bluestein's algorithm (chirp multiplies and power-of-two FFTs of 16384 points a transform); fix: "
        "n = 8192 (the next fast length), the same linear convolution; resource dram (cuFFT's passes are "
        "memory-bound)",
        resource="dram",
    ),
    Pair(
        "gc.collect() after every training step",
        "gc_every_step.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.2e12, "bytes": 1.8e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="an MLP's training step (8192 x 2048, six 2048 x 2048 layers, bf16 autocast, ~3 ms of GEMMs) "
        "followed by gc.collect() in a process holding 40,000 dataset samples as Python dicts and lists (~120,000 "
        "tracked containers, and the process's own): a full collection of the heap on the host every step, "
        "freeing nothing, while the GPU, its queue drained, waits; fix: no gc.collect() in the loop; revised "
        "after the first call's quick check (400,000 samples there: 118.7x, ~0.3 s a collection, too long a "
        "bad step to record), the collection and the cause unchanged",
    ),
]

# The fourteenth held-back set (issue 36): five classes in none of the other sets, built blind to the diagnosis;
# not in ALL_PAIRS or HALF (recorded in recorded-heldout14/, judged once).
HELDOUT14_PAIRS = [
    Pair(
        "a log-sum-exp accumulated with a logarithm and two exponentials per term",
        "calib_logaddexp",
        "v0",
        "v1",
        "move_work",
        planted="the log-density of a Gaussian KDE (32768 queries x 32768 samples in 2-D, fp32) accumulated in "
        "log space per term, acc = log(exp(acc) + exp(s)): two MUFU exponentials and a libdevice logf (an FP32 "
        "polynomial) a term, ~38 instructions; fix: the scores are bounded by 0, so a linear sum of exp(s) "
        "(one exponential, ~9 instructions a term) and one log a query give the same result (resource issue: "
        "the logf polynomial, exponentials and selects fill the issue slots; fma the other reading)",
        resource="issue",
    ),
    Pair(
        "a prefix sum computed as a masked triangular sum",
        "calib_tri_prefix",
        "v0",
        "v1",
        "move_work",
        planted="inclusive cumsum along 2^20 rows of 64 fp32 values computed, for each output column j, as "
        "tl.sum(tl.where(cols <= j, x, 0), axis=1) inserted with another tl.where: 64 masked row reductions "
        "a tile, ~250 instructions an element, most of them selects and compares; fix: tl.cumsum (a scan, "
        "memory-bound); the same sums by a cheaper algorithm (resource alu: the selects; issue the other "
        "reading)",
        resource="alu",
    ),
    Pair(
        "a variance computed in two passes over data too large for the chip",
        "calib_two_pass_var",
        "v0",
        "v1",
        "over_fetch",
        planted="per-channel mean and variance of a [64, 2^22] fp32 tensor (1 GB, 20x the L2) by a mean pass "
        "then a squared-deviation pass over the same data (4096 chunk programs each, partials, a finishing "
        "kernel): x read from DRAM twice; fix: one Welford pass (per-lane running mean and M2, Chan's merge of "
        "lanes and chunks), the same statistics from one read (resource dram)",
        resource="dram",
    ),
    Pair(
        "batches padded to the dataset's maximum length",
        "pad_to_max_length.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 2.5e12, "bytes": 3.0e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a 4-layer, 1024-wide transformer encoder's training step (bf16 autocast, SDPA with a "
        "key-padding mask) on batches of 64 sequences of 32-128 tokens padded to the dataset's maximum, 512 "
        "(32,768 tokens a step for ~5,300 real ones); fix: dynamic padding to each batch's longest sequence "
        "rounded up to a multiple of 64 (128 here), the same losses; the extra time is tensor-core work on "
        "padding (resource tensor); revised after the first call's quick check (32 sequences of 32-160 padded "
        "to the exact longest there: 1.47x, the good variant's odd lengths each a new shape), the padding and "
        "the cause unchanged",
        resource="tensor",
    ),
    Pair(
        "host memory registered and unregistered for every transfer",
        "host_register_per_batch.py",
        "bad",
        "good",
        "cuda_api",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.1e11, "bytes": 2.0e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="an inference loop streaming 64 MB batches (16,384 x 1,024 fp32) from a pageable host array to "
        "the GPU (a two-layer bf16 MLP a batch), each batch's pages locked with cudaHostRegister before its "
        "non_blocking copy, the stream synchronised and the pages released with cudaHostUnregister after it "
        "(the with cuda.pinned(array): pattern); fix: the host array registered once before the loop, the copy "
        "alone; the extra time is page locking in CUDA API calls in the loop (resource None); replaces "
        "'deterministic algorithms left on for a scatter-add' (deterministic_index_add.py, 57d8acc: 1.01x in "
        "the second call's quick check, both variants bound by the same fp32 SIMT GEMMs, not recorded)",
    ),
]

# The fifteenth held-back set (tests/calibration/recorded-heldout15/README.md): five classes none of the earlier
# sets has, built blind to the diagnosis; causes and resources set from each design before any GPU number.
HELDOUT15_PAIRS = [
    Pair(
        "a symmetric product computed in full where one triangle serves",
        "calib_syrk",
        "v0",
        "v1",
        "move_work",
        planted="the Gram matrix C = X·Xᵀ (X [8192, 2048] bf16, C bf16, fp32 accumulation) computed by a general "
        "tiled GEMM over all 4096 tiles of the symmetric C: every dot product twice, 275 GFLOP of MMAs for "
        "~137.5; fix: the same kernel over the 2080 tiles on and above the diagonal, each off-diagonal tile also "
        "stored transposed (SYRK); the same values by half the tensor-core work (resource tensor)",
        resource="tensor",
    ),
    Pair(
        "an output zero-filled before a kernel that writes all of it",
        "calib_zeroed_out",
        "v0",
        "v1",
        "over_fetch",
        planted="the 8192 x 8192 fp32 matrix of squared distances between two 3-D point sets (256 MB, a "
        "write-bound kernel) allocated zeroed: a fill kernel writes the 256 MB of zeros, then the distance "
        "kernel overwrites every element; fix: the output left uninitialised (torch.empty), the distance kernel "
        "alone; the fill's bytes are dead stores (resource dram)",
        resource="dram",
    ),
    Pair(
        "split-K where the grid already fills the GPU",
        "calib_needless_splitk",
        "v0",
        "v1",
        "over_fetch",
        planted="a 4096 x 4096 x 2048 bf16 GEMM (1024 output tiles of 128x128: 7.8 waves) run with SPLIT_K = 8: "
        "8192 programs each over a 256-long K slice store fp32 partial tiles to a 512 MB workspace, a second "
        "kernel reads the eight slices back and writes C; fix: no split, each tile over all of K stored "
        "directly; the partials' round trip through device memory is the extra time (resource dram; the "
        "MMAs are the same)",
        resource="dram",
    ),
    Pair(
        "independent models run one after another on one stream",
        "ensemble_one_stream.py",
        "bad",
        "good",
        "streams",
        mode="nsys",
        command=True,
        models={"step": {"flops": 3.4e7, "bytes": 1.34e8, "dtype": "float32", "tensor_cores": False}},
        planted="an ensemble of 8 independent members, each a Triton linear-recurrence kernel (h_t = a·h_{t-1} "
        "+ x_t over 8 sequences x 1024 steps x 256 channels, fp32) of 8 programs, launched one after another on "
        "the default stream: each kernel fills 8 of 132 SMs and the eight run back to back; fix: each member "
        "on a torch.cuda.Stream of its own (wait_stream both ways), the eight kernels concurrent; the same "
        "kernels and outputs (resource None)",
    ),
    Pair(
        "an explicit inverse where a solve serves",
        "inverse_then_matmul.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 4.8e10, "bytes": 2.0e8, "dtype": "float32", "tensor_cores": False}},
        planted="X = A⁻¹B for A [4096, 4096] fp32 and B [4096, 64] each step computed as torch.linalg.inv(A) @ B: "
        "an LU, triangular solves against the 4096 columns of the identity (2n³ = 137 GFLOP) and a product, "
        "~185 GFLOP of fp32 work; fix: torch.linalg.solve(A, B), the LU and solves with B's 64 columns "
        "(~48 GFLOP), the same X; the extra time is the inverse's solves in cuSOLVER / cuBLAS fp32 kernels "
        "(resource fma: no TF32 by PyTorch's default)",
        resource="fma",
    ),
]

# The sixteenth held-back set (issue 36): five pairs in classes none of the other sets has, designed
# blind (by a helper who did not read the diagnosis code nor the recorded contracts' diagnoses); causes
# and resources set from each package's / script's design before any GPU number
# (tests/calibration/recorded-heldout16/README.md). Not in ALL_PAIRS nor HALF.
HELDOUT16_PAIRS = [
    Pair(
        "a matrix power by repeated multiplication where repeated squaring serves",
        "calib_matpow",
        "v0",
        "v1",
        "move_work",
        planted="P^16 of a 4096 x 4096 row-stochastic bf16 matrix (a Markov chain's 16-step transitions) by "
        "fifteen GEMM launches C = C·P (tl.dot, 128x128x64, fp32 accumulation): 2.06 TFLOP of MMAs; fix: "
        "exponentiation by squaring, four launches of the same kernel (P², P⁴, P⁸, P¹⁶): 0.55 TFLOP; the same "
        "matrix up to rounding, 11 of 15 products removed from the limiting pipe (resource tensor)",
        resource="tensor",
    ),
    Pair(
        "the halves of a fused projection copied to contiguous tensors before a kernel that takes strides",
        "calib_chunk_copies",
        "v0",
        "v1",
        "over_fetch",
        planted="SwiGLU of a fused gate/up projection's output h [16384, 2 x 8192] fp16: gate and up (views "
        "with row stride 2F) each copied to a contiguous buffer by a strided copy kernel (.contiguous()), "
        "then the activation kernel reads the copies: 1.79 GB moved; fix: the activation kernel reads the "
        "halves of h through their row stride: 0.77 GB; the copies' reads and writes are bytes the result "
        "does not need (resource dram)",
        resource="dram",
    ),
    Pair(
        "an iterative solver run for a fixed iteration count far past convergence",
        "calib_sinkhorn_iters",
        "v0",
        "v1",
        "move_work",
        planted="Sinkhorn scaling of 16384 entropic transport problems (32 x 32 cost matrices, fp32, ε = 0.5), "
        "one 1-warp program each with K in registers, run for a fixed 100 iterations (two matrix-vector "
        "products, reductions and divisions each); fix: the same iteration followed by the row-marginal "
        "error, stopping below 1e-5 (~10-20 iterations); the same plan within the tolerance; the extra "
        "iterations' multiplies, shuffles and reductions are issue-bound on no single unit (resource None)",
    ),
    Pair(
        "an autotuner keyed on a size that changes every step",
        "autotune_every_step.py",
        "bad",
        "good",
        "first_call",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.3e12, "bytes": 6.0e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a Triton RMSNorm autotuned (3 configs, do_bench shortened to 1 ms warm-up / 2 ms runs) with "
        "key ['n_rows', 'D'] in a loop whose token count n changes every step: every step re-runs the tuning "
        "(each config launched tens of times after 256 MB L2 flushes, synchronising) before an MLP of "
        "~1.3 TFLOP (cuBLAS bf16); fix: key ['D'], tuned once; the same kernels and outputs (resource None)",
    ),
    Pair(
        "a long convolution computed directly where an FFT serves",
        "long_conv_direct.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.4e10, "bytes": 1.5e8, "dtype": "float32", "tensor_cores": False}},
        planted="a Hyena-style block on u [8, 1024, 512] fp32: projections, then a depthwise causal long "
        "convolution (a filter of length L = 1024 per channel) by F.conv1d on the causally padded input "
        "(4.3 G multiply-adds), the gate, the output projection; fix: the convolution by rfft / irfft at "
        "length 2L (O(L log L)); the same output up to rounding; the library's direct depthwise kernel is "
        "the extra time (resource None: FMA or its loads, by the kernel picked)",
    ),
]

# Issue 36: the seventeenth held-back set (recorded-heldout17/), four pairs in classes none of the earlier
# sets has, designed (cause, resource, planted) by a helper who did not read the diagnosis and committed
# before any GPU number. The command pairs first (the cheapest to record). Not in ALL_PAIRS or HALF.
HELDOUT17_PAIRS = [
    Pair(
        "a model head left on the CPU after the model was moved to the GPU",
        "cpu_head.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 5.7e11, "bytes": 5.5e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="inference on x [2048, 4096] bf16: a trunk of 8 Linear(4096, 4096) + GELU and a Linear(4096, "
        "1024) on the GPU, then a head (LayerNorm, Linear(1024, 512), GELU, Linear(512, 256), fp32) attached "
        "after model.to('cuda') and so left on the CPU: every step copies the features to the host, runs the "
        "head's 2.7 GFLOP on the host's cores while the GPU idles, copies the logits back; fix: the head on "
        "the GPU; the same logits up to rounding (the host's work between launches: resource None)",
    ),
    Pair(
        "a backward pass per loss through the shared trunk where one backward of their sum serves",
        "multi_loss_backward.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 8.25e11, "bytes": 1.0e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a multi-task training step: x [8192, 2048] bf16 through a shared trunk of 4 Linear(2048, 2048) "
        "+ GELU, 4 task heads with an MSE loss each, backward then SGD; each loss back-propagated on its own "
        "(loss_i.backward(retain_graph=True)): the trunk's backward (550 GFLOP) runs 4 times; fix: one "
        "backward of the losses' sum, the same gradients (they accumulate); the extra GEMMs run on the "
        "tensor cores (resource tensor)",
        resource="tensor",
    ),
    Pair(
        "every expert applied to every token, the router's choice applied afterwards",
        "calib_moe_dense",
        "v0",
        "v1",
        "move_work",
        planted="a top-1 mixture-of-experts layer: x [16384, 1024] fp16 grouped by expert, 8 experts W_e [1024, "
        "1024], out = gate · x W_{id}; each 128x128 output tile multiplied by all 8 experts' weights (8 K "
        "loops of tl.dot, fp32 accumulation) and the rows' chosen expert kept (tl.where): 275 GFLOP of MMAs; "
        "fix: a grouped GEMM, each tile multiplied only by its rows' expert: 34 GFLOP; the same output; 7 of "
        "8 products removed from the limiting pipe (resource tensor)",
        resource="tensor",
    ),
    Pair(
        "a stencil's new grid copied back after every sweep where swapping the buffers serves",
        "calib_jacobi_copy",
        "v0",
        "v1",
        "over_fetch",
        planted="4 Jacobi sweeps (5-point Laplace update) of an 8192 x 8192 fp32 grid, each into a second grid "
        "(one program per row and 1024-column block), then a copy kernel writing the new grid back into the "
        "old one (u.copy_(u_new)): 8 stages, 4 GB moved; fix: the two grids exchanged after each sweep (4 "
        "stages, 2 GB); the same iterates; the copies' reads and writes are bytes the result does not need "
        "(resource dram)",
        resource="dram",
    ),
]

# The eighteenth held-back set (tests/calibration/recorded-heldout18/README.md): causes and resources set from
# each design before any GPU number; not in ALL_PAIRS, HALF or any other list.
HELDOUT18_PAIRS = [
    Pair(
        "a model's weights offloaded to the host and copied in at every forward though they fit on the GPU",
        "weight_offload.py",
        "bad",
        "good",
        "copy",
        mode="nsys",
        command=True,
        models={"step": {"flops": 2.2e12, "bytes": 1.3e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="inference on x [8192, 4096] bf16 through 8 Linear(4096, 4096) + GELU layers whose weights "
        "stay in pageable host memory (CPU offload, as Accelerate's cpu_offload / diffusers' sequential "
        "offload do) on a GPU that holds them: every step copies each layer's weight and bias (268 MB) to "
        "the GPU before its GEMM and drops them after, the GEMMs waiting for the staged copies; fix: the "
        "weights moved to the GPU once; the same outputs (host-to-device transfers in the step: resource "
        "None)",
    ),
    Pair(
        "a graph batch's sum pooling run with deterministic algorithms forced on (a sort-based scatter-add)",
        "deterministic_pool.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 3.2e8, "bytes": 1.1e9, "dtype": "float32", "tensor_cores": False}},
        planted="a graph-level sum readout: x [1048576, 64] fp32 of 128 graphs (8192 nodes each, sorted "
        "batch vector), h = relu(x * a + b), pooled = zeros(128, 64).index_add_(0, batch, h), under "
        "torch.use_deterministic_algorithms(True) (fill_uninitialized_memory off): index_add_ becomes a "
        "sort-based index_put_(accumulate=True) that walks each graph's 8192 rows serially; fix: the "
        "default atomic index_add_; the same sums up to rounding (a costlier library method; a latency-bound "
        "chain, no pipe: resource None)",
    ),
    Pair(
        "a softmax computed before an argmax it cannot change",
        "calib_softmax_argmax",
        "v0",
        "v1",
        "over_fetch",
        planted="greedy decoding over logits [4096, 32000] fp32: argmax(softmax(logits)): a softmax kernel "
        "(two passes over each row, the probabilities written: 3 x 524 MB) then an argmax over the "
        "probabilities (524 MB); fix: the argmax of the logits (one pass: the softmax is monotonic); the "
        "same indices; the softmax's reads and writes and the probabilities' read back are bytes the result "
        "does not need (resource dram)",
        resource="dram",
    ),
    Pair(
        "pairwise squared distances summed from differences where the dot-product expansion serves",
        "calib_pairwise_dist",
        "v0",
        "v1",
        "move_work",
        planted="4096 x 4096 squared Euclidean distances of 128-feature fp16 points (stored feature-major): "
        "each 128x128 tile sums (x_k - y_k)^2 one feature at a time in FP32, a subtraction and an FMA per "
        "pair and feature (4.3 G lane operations on the FMA pipes); fix: ||x||^2 + ||y||^2 - 2 x.y, the "
        "product with tl.dot on the tensor cores (4.3 GFLOP); the same distances up to rounding (resource "
        "fma)",
        resource="fma",
    ),
]

# The nineteenth held-back set (recorded-heldout19/README.md): not in ALL_PAIRS or HALF; recorded through
# heldout_kit (gpu_call.sh 19, record_set.py 19).
HELDOUT19_PAIRS = [
    Pair(
        "convolutions run with cuDNN switched off (PyTorch's im2col fallback)",
        "cudnn_disabled.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.2e11, "bytes": 1.6e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="inference on x [32, 256, 28, 28] bf16 through 4 Conv2d(256, 256, 3, padding=1) + ReLU "
        "layers with torch.backends.cudnn.enabled = False left in the script: every convolution falls back "
        "to PyTorch's slow path, for each of the 32 samples an im2col kernel (3.6 MB unfolded) and a small "
        "GEMM, where cuDNN runs the batch as one implicit-GEMM kernel; fix: cuDNN on (the default); the same "
        "outputs up to rounding (the same convolutions by a costlier library method: resource None)",
    ),
    Pair(
        "a CPU-bound Python thread beside the training loop holding the GIL (convoy effect)",
        "gil_thread.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 6.6e12, "bytes": 2.4e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="inference on x [8192, 8192] bf16 through 6 Linear(8192, 8192) + GELU layers while a thread "
        "of the same process tokenises text in pure Python without pause: each PyTorch call releases the GIL "
        "around its launch, the busy thread takes it and the loop's thread gets it back only after the 5 ms "
        "switch interval, so the launches trail the GPU, which idles between kernels; fix: the tokenising in "
        "a worker process (its own GIL); the same outputs (the host's launches delayed: resource None)",
    ),
    Pair(
        "a polynomial evaluated with each power of x computed from scratch where Horner's rule serves",
        "calib_poly_powers",
        "v0",
        "v1",
        "move_work",
        planted="p(x) of degree 24 over 2^25 fp32 elements: for each term k an inner loop of k "
        "multiplications forms x**k (300 multiplications and 24 FMAs an element, ~10.9 G FP32 lane "
        "operations); fix: Horner's rule, 25 FMAs an element (memory-bound); the same values up to rounding "
        "(O(D^2) FP32 multiplications on the FMA pipes where O(D) serve: resource fma)",
        resource="fma",
    ),
    Pair(
        "a crop gathered through a materialised per-element index tensor where a strided slice serves",
        "calib_index_crop",
        "v0",
        "v1",
        "over_fetch",
        planted="x [16384, 8192] fp16, the columns 1024..5119 copied out contiguous (67 M elements) as "
        "out[i] = x[idx[i]] with idx an int64 tensor of flat offsets built element by element (12 bytes an "
        "element: the 8-byte index, the value, the output); fix: the slice addressed by row and column "
        "(4 bytes an element); the same values; the index's bytes are bytes the result does not need "
        "(resource dram)",
        resource="dram",
    ),
]

# The twentieth held-back set (recorded-heldout20/README.md): causes and resources set from each design before
# any GPU number; not in ALL_PAIRS or HALF.
HELDOUT20_PAIRS = [
    Pair(
        "a row kernel launched on the 2-D grid of the elementwise kernel it replaced, every row processed by 8 "
        "programs",
        "calib_row_grid_dup",
        "v0",
        "v1",
        "over_fetch",
        planted="an RMSNorm kernel that holds a whole row per program (x [32768, 4096] fp16) launched with the "
        "grid (cdiv(N, 512), M) kept from the 2-D elementwise version: it takes its row from program_id(1) and "
        "ignores program_id(0), so each row is read, normalised and written by 8 programs side by side (the "
        "same values stored 8 times); fix: grid (M,), one program a row; the same outputs; the duplicate "
        "reads and stores are bytes the result does not need, served by L2 (resource l2)",
        resource="l2",
    ),
    Pair(
        "a Kronecker-factored operator applied as its materialised dense matrix where the vec trick serves",
        "calib_kron_dense",
        "v0",
        "v1",
        "move_work",
        planted="y = (A ⊗ B) x for 64 vectors of length n² (n = 128, fp16) computed as a GEMM against K = "
        "kron(A, B), a 16384 x 16384 matrix (512 MB) streamed from DRAM for every call; fix: the identity "
        "(A ⊗ B) vec(X) = vec(A X Bᵀ), two 128 x 128 products a vector (~2 MB read); the same values up to "
        "rounding (a full algorithm where the factored one serves; the bad version's time is K's DRAM "
        "stream: resource dram)",
        resource="dram",
    ),
    Pair(
        "torch.distributions argument validation left on (a host wait at every parameter and support check)",
        "dist_validate.py",
        "bad",
        "good",
        "sync",
        mode="nsys",
        command=True,
        models={"step": {"flops": 7.6e10, "bytes": 4.0e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="inference on h [2048, 1024] bf16 through 8 stochastic layers (a GEMM, Normal(loc, "
        "softplus(s) + 1e-3), the log-density of a target, tanh) with validate_args left at its default (on): "
        "each Normal checks loc and scale and each log_prob its value, each check a Python bool of a GPU "
        "tensor (24 host waits a step): the GPU drains its queue and idles while the host launches the next "
        "kernels; fix: validate_args=False; the same outputs (the host waiting for the GPU: resource None)",
    ),
    Pair(
        "per-row quadratic forms taken as the diagonal of the full N x N product",
        "quad_form_diag.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 6.9e10, "bytes": 5.0e7, "dtype": "bfloat16", "tensor_cores": True}},
        planted="q_i = x_iᵀ S x_i for X [8192, 2048] bf16, S [2048, 2048] computed as torch.diagonal(X @ S @ "
        "X.T): the 8192 x 8192 product of all cross terms (275 GFLOP on the tensor cores, 128 MB written) to "
        "keep its diagonal; fix: ((X @ S) * X).sum(-1), the same 68.7-GFLOP GEMM and a row-wise product sum; "
        "the same values up to rounding (a full product where its diagonal serves: resource tensor)",
        resource="tensor",
    ),
]

# The twenty-first held-back set (tests/calibration/recorded-heldout21/README.md): four classes none of the
# other sets has, causes and resources set from each design before any GPU number.
HELDOUT21_PAIRS = [
    Pair(
        "a sum of 2-D Gaussians evaluated with one exponential per (pixel, centre) where the product of two 1-D "
        "Gaussians serves",
        "calib_gauss_sep",
        "v0",
        "v1",
        "move_work",
        planted="a density map D [2048, 2048] fp32 = Σ_k w_k exp(-((i - cy_k)² + (j - cx_k)²) / 2σ²) over 64 "
        "centres evaluated as written: an exponential (ex2 on the special-function pipe, a quarter of the FP32 "
        "rate) for each of the 268 M (pixel, centre) pairs; fix: the isotropic Gaussian is separable, per chunk "
        "of 32 centres the tile's row factors w·exp(-dy²/2σ²) and column factors exp(-dx²/2σ²) (25x fewer "
        "exponentials) multiplied as a product in IEEE fp32 (FMAs); the same values up to rounding (the needed "
        "values by a costlier method: resource xu, the pipe the bad version's time is spent on)",
        resource="xu",
    ),
    Pair(
        "a matrix-vector product stepping through each row 128 elements at a time, a load round trip and a block "
        "reduction a step",
        "calib_gemv_narrow",
        "v0",
        "v1",
        "latency",
        planted="y = W v, W [16384, 8192] fp16 (256 MB), one program (4 warps) a row, acc += tl.sum(w * v) in "
        "steps of BLOCK_K = 128: one 2-byte load a thread a step, then a block reduction (a barrier) before the "
        "next step's load: at full occupancy ~4 KB of W in flight an SM, the warps waiting on DRAM round trips "
        "with no unit busy; fix: BLOCK_K = 2048 (two 16-byte loads a thread a step, 16x the bytes in flight); "
        "the same values up to the order of the fp32 sums (resource None)",
    ),
    Pair(
        "activations carried as a metadata tensor subclass (a Python __torch_function__ at every operation)",
        "subclass_meta.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 3.3e9, "bytes": 1.0e8, "dtype": "float32", "tensor_cores": False}},
        planted="inference on h [256, 512] fp32 through 12 residual blocks (layer norm, two 512 x 512 linears, "
        "GELU, a scaled residual add: 73 small kernels a step) with h wrapped as a torch.Tensor subclass whose "
        "__torch_function__ calls the base implementation and tags each result with the input's metadata (as "
        "MONAI's MetaTensor): Python at every operation between the launches; fix: plain tensors in the loop; "
        "the same outputs (CPU work between launches: resource None)",
    ),
    Pair(
        "torch.linalg.cholesky in the loop (a host wait for its error check at every call) where cholesky_ex "
        "serves",
        "linalg_sync.py",
        "bad",
        "good",
        "sync",
        mode="nsys",
        command=True,
        models={"step": {"flops": 2.5e8, "bytes": 1.0e8, "dtype": "float32", "tensor_cores": False}},
        planted="the log-likelihoods of 16 groups of batched Gaussians a step (S = K + U Uᵀ + jitter·I, a batch "
        "of 64 64 x 64 fp32 matrices, its Cholesky factor, a triangular solve, the log-determinant) with "
        "torch.linalg.cholesky, which reads its error codes on the host: a device-to-host copy and a wait for "
        "the GPU at each of the 16 calls, the GPU idle while the host launches the next kernels; fix: "
        "torch.linalg.cholesky_ex(S).L (no check, no wait); the same outputs (the host waiting for the GPU: "
        "resource None)",
    ),
]

# The twenty-second held-back set (recorded-heldout22/README.md): causes and resources set from the designs
# before any GPU number.
HELDOUT22_PAIRS = [
    Pair(
        "a matrix product launched with a leftover split-K grid axis, every tile computed by 4 programs",
        "calib_grid_dup",
        "v0",
        "v1",
        "move_work",
        planted="C [4096, 4096] fp32 = A · B (fp16, tl.dot on the tensor cores, tiles [128, 128]) launched on a "
        "grid (1024 tiles, 4) left over from a split-K version whose K loop was made whole again: the 4 programs "
        "of each tile all run the full K loop and store the same values (4x the MMAs and loads); fix: grid "
        "(1024, 1); the same values (the needed product done 4 times over: resource tensor)",
        resource="tensor",
    ),
    Pair(
        "neighbours on a sphere counted with an inverse cosine per pair where comparing the cosine serves",
        "calib_angle_count",
        "v0",
        "v1",
        "move_work",
        planted="for 16384 unit vectors, counts of the others within 0.3 rad, 268 M pairs: each pair's dot "
        "product clamped and passed through acosf (a square root on the XU times a degree-7 FMA polynomial, "
        "~15 instructions) then compared with θ; fix: dot > cos θ (cos θ once on the host, acos decreasing); the "
        "same counts (the needed comparison by a costlier method: resource fma, the polynomial's pipe)",
        resource="fma",
    ),
    Pair(
        "spectral normalisation by a full SVD every step where one power-iteration step with persistent vectors "
        "serves",
        "spectral_svd.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.7e9, "bytes": 2.0e7, "dtype": "float32", "tensor_cores": False}},
        planted="3 spectral-normalised 256 x 256 fp32 layers (weights updated in place each step) scoring a batch "
        "[1024, 256], σ_max of each weight by torch.linalg.matrix_norm(W, ord=2): a cuSOLVER SVD a layer a "
        "step; fix: persistent u, v and 2 power-iteration steps a layer (as torch.nn.utils.parametrizations."
        "spectral_norm); the same outputs up to rounding (a full decomposition where a power-iteration step "
        "gives the same σ: many small library kernels, resource None)",
    ),
    Pair(
        "a debug log line formatting a tensor in an f-string with the log level off",
        "log_format.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 3.3e9, "bytes": 1.0e8, "dtype": "float32", "tensor_cores": False}},
        planted="inference on h [256, 512] fp32 through 12 residual blocks with log.debug(f\"... {h}\") after "
        "every third block, the logger at WARNING: the f-string runs Tensor.__str__ (PyTorch's Python printer: "
        "a summary, a fitted formatter, small reads back) 4 times a step and the string is dropped; fix: "
        "log.debug(\"... %s\", h) (formatted only if emitted); the same outputs (CPU work between launches: "
        "resource None)",
    ),
]

# Twenty-third held-back set (blind: designed without the diagnosis code; causes committed before any GPU
# number, see tests/calibration/recorded-heldout23/README.md).
HELDOUT23_PAIRS = [
    Pair(
        "three projections of one input launched as three small matrix products where one over the concatenated "
        "weights serves",
        "calib_split_proj",
        "v0",
        "v1",
        "few_blocks",
        planted="Q, K and V of X [512, 4096] fp16 (W [4096, 1024] each, tl.dot on the tensor cores, tiles "
        "[128, 128]) launched as three matrix products of 32 programs each, one after another: every launch "
        "fills 32 of 132 SMs for its whole K loop; fix: one launch of 96 programs over [Wq | Wk | Wv] "
        "concatenated once (a fused QKV projection); the same values (grids far below the SM count: "
        "resource None)",
    ),
    Pair(
        "a 32-bit xorshift generator stepped in 64-bit integers, masked back to 32 bits after every shift",
        "calib_xorshift64",
        "v0",
        "v1",
        "move_work",
        planted="16 M states after 64 xorshift32 steps (x ^= x << 13; x ^= x >> 17; x ^= x << 5), the state "
        "widened to int64 and masked with 0xFFFFFFFF after each left shift (as ported from Python/NumPy): every "
        "shift, xor and mask emulated by two 32-bit integer instructions or more; fix: the state as uint32 "
        "(wrap-around is the mask); the same values (the needed integer work by a costlier method: resource "
        "alu)",
        resource="alu",
    ),
    Pair(
        "forward hooks left on every module computing activation statistics at every step",
        "stat_hooks.py",
        "bad",
        "good",
        "launch",
        mode="nsys",
        command=True,
        models={"step": {"flops": 5.4e8, "bytes": 2.0e7, "dtype": "float32", "tensor_cores": False}},
        planted="inference on h [64, 512] fp32 through 8 blocks (layer norm, linear, GELU, linear, residual; "
        "33 leaf modules, ~50 small kernels a step) with a forward hook on every leaf module storing "
        "torch.stack([o.mean(), o.std(), o.abs().amax()]) (never read): ~4-5 more tiny kernels a module, ~150 "
        "a step; fix: the hooks removed; the same outputs (the step bound by launching many tiny kernels: "
        "resource None)",
    ),
    Pair(
        "a rollback copy of the model taken with copy.deepcopy before every optimizer step",
        "deepcopy_snapshot.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.6e9, "bytes": 5.0e7, "dtype": "float32", "tensor_cores": False}},
        planted="a training step of an MLP of 8 blocks (linear 512 x 512, layer norm, GELU) on [128, 512] fp32, "
        "MSE, SGD with momentum, with snap = copy.deepcopy(model) before the optimizer step (a Python walk of "
        "25 modules and 24 new device tensors a step); fix: torch._foreach_copy_ into a copy made once; the "
        "same losses and snapshot (CPU work between launches: resource None)",
    ),
]


# The twenty-fourth held-back set (designed blind; recorded-heldout24/README.md): causes and resources set from the
# designs before any GPU number.
HELDOUT24_PAIRS = [
    Pair(
        "per-program partial sums merged into one buffer under one spin lock (the layer-norm backward's "
        "GROUP_SIZE_M = 1)",
        "calib_lock_partials",
        "v0",
        "v1",
        "atomics",
        planted="dw = sum over 67584 rows of dy * xhat ([67584, 1024] fp16 each) by 264 programs of 256 rows, "
        "each merging its partial [1024] fp32 into a shared buffer under a lock taken by tl.atomic_cas and "
        "released by tl.atomic_xchg (Triton's layer-norm tutorial) with one lock and one buffer: the 264 merges "
        "queue on one address, one after another; fix: 64 locks and buffers (program p takes p % 64), summed "
        "by a finishing kernel; the same sums (contended atomics on the lock: resource None)",
    ),
    Pair(
        "a grouped linear layer multiplied as one dense matrix over its block-diagonal weight",
        "calib_blockdiag",
        "v0",
        "v1",
        "move_work",
        planted="out = X [8192, 4096] fp16 times a grouped weight of 8 blocks [512, 512] (a grouped 1x1 "
        "convolution), computed as one dense tl.dot GEMM over torch.block_diag of the blocks [4096, 4096]: 64 K "
        "steps a tile, 56 of them multiplying zero blocks (275 GFLOP for 34 needed); fix: the grouped GEMM, the "
        "group a grid axis, each program its slice of X by its block (8 K steps); the same values (the needed "
        "products done by a costlier method on the tensor cores: resource tensor)",
        resource="tensor",
    ),
    Pair(
        "a Triton kernel defined inside the function that launches it (a new JITFunction, its cache looked up "
        "and its binary loaded, at every step)",
        "jit_per_call.py",
        "bad",
        "good",
        "first_call",
        mode="nsys",
        command=True,
        models={"step": {"flops": 2.75e11, "bytes": 4.0e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a step of RMSNorm (a Triton kernel, one program a row) on x [4096, 4096] bf16 then gelu(h W1) "
        "W2 (W1, W2 [4096, 4096], cuBLAS) with the RMSNorm's @triton.jit inside the wrapper called every step: "
        "a new JITFunction each call, so every step rebuilds its binder, re-hashes its source, reads the "
        "compiled kernel back from Triton's disk cache and loads a new module; fix: the kernel defined once at "
        "module level; the same outputs (a one-off JIT cost paid at every step: resource None)",
    ),
    Pair(
        "a Python line tracer left installed while the model runs (a debugger's or coverage tool's "
        "sys.settrace hook)",
        "line_tracer.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 3.2e9, "bytes": 1.1e8, "dtype": "float32", "tensor_cores": False}},
        planted="inference on h [64, 512] fp32 through 12 residual blocks (LayerNorm, Linear 512 x 2048, GELU, "
        "Linear 2048 x 512, Dropout in eval; ~60 small kernels a step) with a coverage-style line tracer "
        "(sys.settrace counting every executed line) installed around the loop: the tracer runs at every line "
        "of every nn.Module call on the host while the GPU idles; fix: no tracer; the same outputs (CPU work "
        "between launches: resource None)",
    ),
]


# The twenty-fifth held-back set (designed blind; recorded-heldout25/README.md): causes and resources set from the
# designs before any GPU number.
HELDOUT25_PAIRS = [
    Pair(
        "a sum reduced by log2(N) pairwise-halving kernel passes, the partial arrays through global memory",
        "calib_halving_sum",
        "v0",
        "v1",
        "fusion",
        planted="out = sum of X [2^28] fp32 by 28 launches of a halving kernel (y[i] = x[i] + x[i + ceil(n/2)]), "
        "each pass writing its half-length partial array to global memory and the next pass reading it back "
        "(~3 GiB of DRAM traffic for a 1 GiB input, then ~20 small passes); fix: one pass of per-program chunk "
        "sums (65536 elements each, on chip) and one finishing program over the 4096 partials; the same sum "
        "(several kernels where one keeps the partial sums on chip, the intermediate arrays' round trips: "
        "resource dram)",
        resource="dram",
    ),
    Pair(
        "a two-layer MLP fused into one kernel by recomputing the hidden activation in every output tile",
        "calib_overfused_mlp",
        "v0",
        "v1",
        "move_work",
        planted="Y = relu(X [8192, 1024] W1 [1024, 4096]) W2 [4096, 1024] fp16 in one kernel: each [128, 128] "
        "tile of Y recomputes its rows' whole hidden block relu(X W1) chunk by chunk (tl.dot) before multiplying "
        "it by W2, so the first GEMM is done once per column tile of Y, 8 times over (619 GFLOP for 137 "
        "needed); fix: the hidden computed once (a GEMM with a ReLU epilogue, stored fp16) and a second GEMM; the "
        "same values (the needed products done by a costlier method on the tensor cores: resource tensor)",
        resource="tensor",
    ),
    Pair(
        "the CUDA allocator's memory-history recording (torch.cuda.memory._record_memory_history) left on while "
        "training",
        "memory_history.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 4.0e8, "bytes": 5.0e7, "dtype": "float32", "tensor_cores": False}},
        planted="a training step of an MLP of 16 blocks (Linear 256 x 256, LayerNorm, GELU) on [64, 256] fp32, "
        "MSE, AdamW (foreach), with torch.cuda.memory._record_memory_history(max_entries=100000) left on around "
        "the loop: a Python and a C++ stack captured on the host at each of the step's few hundred allocations "
        "and frees; fix: the recording stopped; the same losses (CPU work between launches: resource None)",
    ),
    Pair(
        "activations offloaded to the host by torch.autograd.graph.save_on_cpu though they fit on the GPU",
        "activation_offload.py",
        "bad",
        "good",
        "copy",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.65e12, "bytes": 1.0e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a training step of 4 blocks (Linear 4096 x 4096 without bias, GELU) on x [4096, 4096] bf16, "
        "the mean square as the loss, SGD, inside torch.autograd.graph.save_on_cpu(pin_memory=True): every "
        "saved tensor (each block's Linear input and weight and GELU input, the loss's fp32 input: ~0.45 GB) "
        "copied to pinned host memory in the forward (synchronous copies) and back in the backward; fix: no "
        "offloading; the same losses (host-device transfers in the step: resource None)",
    ),
]

# The twenty-sixth held-back set (tests/calibration/recorded-heldout26/README.md): designed by a helper who did not
# read the model; causes and resources committed before any GPU number. Not in ALL_PAIRS.
HELDOUT26_PAIRS = [
    Pair(
        "the layer timing helper's torch.cuda.synchronize() around every module of the forward",
        "layer_timing_sync.py",
        "bad",
        "good",
        "sync",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.7e10, "bytes": 1.6e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="the inference forward of 32 blocks (Linear 1024 x 1024 with bias, GELU, LayerNorm: 96 leaf "
        "modules of one kernel each) on x [256, 1024] bf16, each module's call bracketed by "
        "torch.cuda.synchronize() and time.perf_counter() (a per-module timing helper left on): the host waits "
        "for the GPU to drain twice a module and launches the next module only after the last kernel ended, "
        "the GPU idle meanwhile; fix: the helper off; the same outputs (the host waits for the GPU: resource "
        "None)",
    ),
    Pair(
        "greedy decoding without a key/value cache, the whole sequence run through the model again for every "
        "new token",
        "decode_no_cache.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 8.4e11, "bytes": 7.5e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="16 tokens generated greedily for 4 prompts of 512 tokens by a 4-layer decoder (width 2048, 16 "
        "heads, MLP 4x, vocabulary 8192, bf16, inference mode), each new token from a forward over the whole "
        "sequence so far (512 ... 527 positions: the prompt's keys, values and MLP recomputed 16 times, ~16 x "
        "0.9 TFLOP); fix: one prefill into a preallocated key/value cache per layer, then 15 one-token forwards "
        "attending over the cache; the same tokens (the needed logits computed by a costlier method, the "
        "recomputed positions' matrix products on the tensor cores: resource tensor)",
        resource="tensor",
    ),
    Pair(
        "the normal CDF integrated by Simpson's rule (65 exponentials an element) where erf serves",
        "calib_cdf_quadrature",
        "v0",
        "v1",
        "move_work",
        planted="out = Phi(X) for X [2^24] fp32: per element Simpson's rule over [0, |x|] in 64 intervals, the "
        "Gaussian density at 65 nodes by exp2 (MUFU.EX2), 1/2 +- the integral: ~1.1e9 special-function "
        "operations; fix: (1 + erf(x / sqrt 2)) / 2 (libdevice erff, FMA work, memory-bound); the same values "
        "to ~1e-6 (the needed values by a costlier method, the exponentials on the special-function units: "
        "resource xu)",
        resource="xu",
    ),
    Pair(
        "int8 weights dequantised into a full fp16 copy before every decode GEMM where dequantising in the "
        "GEMM's loads serves",
        "calib_dequant_copy",
        "v0",
        "v1",
        "fusion",
        planted="Y = X [16, 8192] fp16 @ (Wq [8192, 16384] int8 * s [16384] fp16) (a weight-only quantised "
        "layer at decode): a dequantising kernel writes the 256 MiB fp16 copy of the 128 MiB int8 weights and "
        "a GEMM (tl.dot, BLOCK_M 16) reads it back: ~640 MiB of DRAM traffic; fix: one GEMM converting each "
        "int8 tile to fp16 after its load, the column scales applied to the accumulator: ~128 MiB; the same "
        "result up to rounding (two kernels where one keeps the dequantised tile on chip, the copy's write and "
        "re-read: resource dram)",
        resource="dram",
    ),
]


# The twenty-seventh held-back set (issue 36): designed by a helper who did not read the model; causes,
# resources and planted texts committed before any GPU number (tests/calibration/recorded-heldout27/README.md).
HELDOUT27_PAIRS = [
    Pair(
        "a stride-2 transposed convolution computed as a convolution over a zero-inserted input where "
        "conv_transpose2d serves",
        "conv_transpose_zero_insert.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.37e11, "bytes": 1.7e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a 2x upsampling layer: the transposed convolution of x [16, 256, 64, 64] bf16 (channels_last) "
        "with w [256, 256, 4, 4], stride 2, padding 1, computed as x spread into a zero-filled [16, 256, 127, "
        "127] grid (xz[:, :, ::2, ::2] = x) and conv2d with the flipped, transposed kernel, padding 2: 3 of 4 "
        "inputs of that convolution are inserted zeros, 4x the needed multiply-adds (5.5e11 FLOPs for 1.37e11); "
        "fix: conv_transpose2d(x, w, stride=2, padding=1); the same outputs up to rounding (the needed result "
        "by a costlier method, the wasted multiply-adds on the tensor cores: resource tensor)",
        resource="tensor",
    ),
    Pair(
        "log-determinants of SPD matrices through a full eigendecomposition where a Cholesky factorisation serves",
        "logdet_eigh.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.8e8, "bytes": 1.3e8, "dtype": "float32", "tensor_cores": False}},
        planted="log det K for K = C + jitter I, a batch of 8192 SPD matrices 32 x 32 fp32, by "
        "torch.linalg.eigvalsh(K).log().sum(-1) (cuSOLVER's batched symmetric eigensolver: an iterative "
        "algorithm over every matrix; its error check one host wait a step); fix: 2 * "
        "cholesky_ex(K).L.diagonal().log().sum(-1) (a batched potrf, n^3 / 3 multiply-adds, no host wait); the "
        "same values up to rounding (the needed value by a costlier method; the eigensolver's kernels use no "
        "single pipe: resource None)",
    ),
    Pair(
        "6x6 determinants by the 720-term Leibniz sum where Laplace expansion with shared minors serves",
        "calib_det_leibniz",
        "v0",
        "v1",
        "move_work",
        planted="out = det(A_b) for 2^22 matrices 6 x 6 fp16 stored element-major (A [36, B], coalesced loads), "
        "computed in fp32 by the Leibniz formula written out (720 signed products of six entries: ~2,700 "
        "FP32 instructions a matrix after the compiler shares the terms' prefixes) for 76 bytes a matrix; fix: "
        "Laplace expansion along the rows with every 2x2 ... 5x5 minor computed once (~190 multiply-adds: "
        "memory-bound); the same values up to rounding (the needed value by a costlier method, its work on the "
        "FMA pipes: resource fma)",
        resource="fma",
    ),
    Pair(
        "a layer norm's row statistics stored broadcast as fp32 [M, N] tensors and read back where one value a "
        "row serves",
        "calib_ln_broadcast_stats",
        "v0",
        "v1",
        "over_fetch",
        planted="Y = LayerNorm(X) for X [8192, 4096] fp16 by two kernels (statistics, normalisation): the "
        "statistics kernel stores each row's mean and rstd broadcast over the row as fp32 [M, N] tensors (2 x "
        "128 MiB written) and the normalisation kernel reads both back element by element (256 MiB): ~704 MiB "
        "of DRAM traffic where ~192 MiB are needed; fix: the same two kernels with mean and rstd one fp32 a row "
        "([M]); the same outputs (bytes moved at DRAM beyond what the result needs: resource dram)",
        resource="dram",
    ),
]


# The twenty-eighth held-back set (tests/calibration/recorded-heldout28/README.md): designed by a helper who did
# not read the model; causes and resources committed before any GPU number.
HELDOUT28_PAIRS = [
    Pair(
        "PyTorch's CUDA Stream Sanitizer left enabled (TORCH_CUDA_SANITIZER=1) in an inference loop",
        "csan_left_on.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.03e11, "bytes": 4e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a 12-block residual MLP (LayerNorm, Linear 1024 -> 1024, GELU, residual add) on x [4096, 1024] "
        "bf16 under inference_mode, ~50 kernels a step, every operator run under the CUDA Stream Sanitizer's "
        "dispatch mode (what TORCH_CUDA_SANITIZER=1 enables at import): schema and argument parsing, per-stream "
        "access records and a Python stack trace for every kernel launch and allocation, on the host thread "
        "between launches while the GPU idles; fix: the sanitizer off; the same outputs (CPU work between "
        "launches sets the step: cause host, resource None)",
    ),
    Pair(
        "a frozen item-embedding table L2-normalised again at every query batch where normalising it once serves",
        "item_renorm.py",
        "bad",
        "good",
        "over_fetch",
        mode="nsys",
        command=True,
        models={"step": {"flops": 3.4e10, "bytes": 1.2e9, "dtype": "float16", "tensor_cores": True}},
        planted="cosine-similarity retrieval: q [32, 512] fp16 against items [2^20, 512] fp16 (1 GiB, frozen), "
        "scores = q @ F.normalize(items, dim=1).T then topk(16), the normalisation inside the step (a row-norm "
        "reduction reading the table, a division reading it again and writing a 1 GiB normalised copy that the "
        "GEMM then reads): ~4 GiB of DRAM traffic a step where ~1.1 GiB are needed; fix: the table normalised "
        "once, before the loop; the same scores bit for bit (bytes moved at DRAM beyond what the result needs: "
        "resource dram)",
        resource="dram",
    ),
    Pair(
        "rotation matrices from axis-angle vectors by a 30-term Taylor series of the matrix exponential where "
        "Rodrigues' formula serves",
        "calib_so3_taylor",
        "v0",
        "v1",
        "move_work",
        planted="R = exp([w]x) for 2^24 axis-angle vectors W [3, B] fp16 stored element-major (R [9, B] fp16), "
        "computed in fp32 by the truncated Taylor series sum_k [w]x^k / k!, k = 0..30 (each term a 3x3 product "
        "with the skew matrix: ~900 FP32 instructions a rotation) for 24 bytes a rotation; fix: Rodrigues' "
        "closed form cos t I + (sin t / t) [w]x + ((1 - cos t) / t^2) w w^T (a square root, a sine, a cosine, "
        "~30 operations: memory-bound); the same values up to rounding (the needed value by a costlier method, "
        "its work on the FMA pipes: resource fma)",
        resource="fma",
    ),
    Pair(
        "a constant-coefficient 5-point Laplacian applied through its assembled ELL sparse matrix where the "
        "matrix-free stencil serves",
        "calib_stencil_assembled",
        "v0",
        "v1",
        "over_fetch",
        planted="y = A x for x fp32 on a 4096 x 4096 grid, A the 5-point Laplacian (Dirichlet), applied as an "
        "assembled ELL matrix: five fp32 values and five int32 column indices a row read with x's gathered "
        "neighbours: ~48 B of DRAM traffic an output (~805 MB) where x's read and y's write (8 B, ~134 MB) are "
        "needed; fix: the matrix-free stencil from x's five neighbours (masked at the edges); the same outputs "
        "(bytes moved at DRAM beyond what the result needs: the matrix's values and indices: resource dram)",
        resource="dram",
    ),
]

# The twenty-ninth held-back set (recorded-heldout29/README.md): designed by a helper who did not read the model;
# causes and resources fixed from the designs before any GPU number; in the order recorded (cheapest first).
HELDOUT29_PAIRS = [
    Pair(
        "inference requests served one at a time (a GEMV a layer a request, the weights re-read from DRAM for "
        "each) where one batched matrix product a layer serves",
        "unbatched_requests.py",
        "bad",
        "good",
        "over_fetch",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.07e9, "bytes": 1.34e8, "dtype": "float16", "tensor_cores": True}},
        planted="8 requests x [1, 4096] fp16 a step through a 4-layer MLP (4096 x 4096 fp16 weights, 128 MiB in "
        "all, more than the L2), each request on its own: 32 matrix-vector products a step, each streaming its "
        "32 MiB layer from DRAM: ~1.07 GB of weight reads a step where ~134 MB are needed; fix: the step's "
        "requests stacked into one [8, 4096] batch, 4 matrix products that read the weights once; the same "
        "outputs (bytes moved at DRAM beyond what the result needs: the weights re-read for every request: "
        "resource dram)",
        resource="dram",
    ),
    Pair(
        "per-sample losses averaged with Python's built-in sum() over a CUDA tensor (an add kernel launched per "
        "sample) where Tensor.sum() serves",
        "builtin_sum.py",
        "bad",
        "good",
        "launch",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.07e9, "bytes": 1.8e7, "dtype": "float16", "tensor_cores": True}},
        planted="an evaluation step: x [64, 1024] fp16 through a 3-layer MLP (~11 kernels), per-sample fp32 "
        "cross-entropy (losses [64]), then sum(losses) / len(losses) with Python's built-in sum: the tensor "
        "unbound into 64 views and added one at a time from the interpreter, 64 tiny add kernels a step, the "
        "GPU idle between them while the host launches; fix: losses.sum() (one reduction kernel); the same mean "
        "up to the fp32 summation order (per-kernel launch cost on the host sets the step: many tiny kernels: "
        "cause launch, resource None)",
    ),
    Pair(
        "an activation evaluated by linear interpolation in a 4097-entry table (two gathers an element) where "
        "computing it serves",
        "calib_lut_silu",
        "v0",
        "v1",
        "move_work",
        planted="y = SiLU(x) for 2^26 fp16 values (x ~ 2 randn) by linear interpolation in a 4097-entry fp32 "
        "table over [-8, 8] (16 KB, L1-resident): two gathers an element whose 32 lanes fall on ~20-30 distinct "
        "128-byte lines, each gather split into one L1 request a line (~1-2 SM cycles an element where the "
        "streaming bytes need ~0.25); fix: x * sigmoid(x) computed in registers (an exponential and a division: "
        "memory-bound on x and y, 4 B an element); the same values to the table's interpolation error (~1e-6) "
        "(the needed values by a costlier method, its work on the L1's gather path: resource l1)",
        resource="l1",
    ),
    Pair(
        "eigenvalues of symmetric 3x3 matrices by 8 cyclic Jacobi sweeps where the analytic roots of the "
        "characteristic cubic serve",
        "calib_eig3_jacobi",
        "v0",
        "v1",
        "move_work",
        planted="eigenvalues of 2^22 symmetric 3x3 matrices (six fp16 entries element-major, three fp32 "
        "eigenvalues out: 36 B a matrix) by 8 cyclic Jacobi sweeps, 24 unrolled rotations each with two "
        "divisions, a square root and a reciprocal square root (~4 MUFU and ~25 FP32 instructions a rotation, "
        "~700 a matrix); fix: the trigonometric closed form (Smith 1961 / Kopp 2008: an arccosine by a "
        "polynomial, two cosines, two square roots, ~120 instructions: memory-bound); the same eigenvalues to "
        "fp32 rounding (the needed values by a costlier method; resource None: the rotations' work spreads over "
        "the MUFU, the FMA pipes and the issue slots, no one pipe owns it)",
    ),
]

# The thirtieth held-back set (recorded-heldout30/README.md): designed by a helper who did not read the model; causes
# and resources fixed from the designs before any GPU number; in the order recorded (cheapest first).
HELDOUT30_PAIRS = [
    Pair(
        "running sums along long rows of a small batch by torch.cumsum (PyTorch's innermost-dimension scan: one "
        "thread block for 8 rows) where a CUB scan a row serves",
        "cumsum_long_rows.py",
        "bad",
        "good",
        "few_blocks",
        mode="nsys",
        command=True,
        models={"step": {"flops": 2.1e6, "bytes": 1.68e7, "dtype": "float32", "tensor_cores": False}},
        planted="y = running sums of x [8, 262144] fp32 along each row by torch.cumsum(x, dim=1): PyTorch's CUDA "
        "scan along the innermost dimension of a tensor with several rows gives each row 16 threads of a "
        "16 x 32-thread block and launches ceil(8 / 32) = 1 block, one SM of 132 walking each row 32 samples at "
        "a time with a block scan and barriers a step; fix: torch.cumsum(x[b], dim=0, out=y[b]) for each of the "
        "8 rows (a 1-D cumsum goes through CUB's device-wide scan, many blocks); the same sums up to the fp32 "
        "addition order (a grid with fewer programs than SMs: cause few_blocks, resource None)",
    ),
    Pair(
        "a real signal filtered through complex FFTs (fft, the product over the full spectrum, ifft, .real) where "
        "rfft and irfft serve",
        "real_fft_as_complex.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.34e9, "bytes": 1.34e8, "dtype": "float32", "tensor_cores": False}},
        planted="256 real fp32 signals of 65536 samples low-pass filtered in the frequency domain as "
        "out.copy_(torch.fft.ifft(torch.fft.fft(x) * H).real): fft of a real tensor computes the half spectrum "
        "and fills the other half by conjugate symmetry (a full complex [256, 65536] spectrum, 8 B a sample), the "
        "product runs over all 65536 frequencies, ifft is a complex-to-complex transform and the real part is "
        "copied out of its complex result: about twice the DRAM bytes of the real transforms; fix: "
        "torch.fft.irfft(torch.fft.rfft(x) * H_half, n=65536, out=out) (the 32769 non-negative frequencies, a "
        "real output); the same signals up to rounding (the needed result by a costlier method, the cuFFT and "
        "elementwise kernels memory-bound: resource dram)",
        resource="dram",
    ),
    Pair(
        "2-D Morton codes interleaved one bit at a time where the magic-number bit spreading serves",
        "calib_morton_bitloop",
        "v0",
        "v1",
        "move_work",
        planted="32-bit Z-order codes of 2^25 points P [2, N] fp16 in [0, 1) (element-major, coalesced), each "
        "coordinate quantised to 16 bits, interleaved one bit at a time (code |= (qx & 1 << b) << b | (qy & 1 << "
        "b) << (b + 1) for b = 0..15, unrolled: ~100 integer shift/logic instructions a point) for 8 bytes a "
        "point; fix: each coordinate's bits spread by four shift-or-mask steps with the binary magic numbers "
        "(Part1By1, ~30 integer instructions: memory-bound); the same codes bit for bit (the needed values by a "
        "costlier method, its work on the integer pipe: resource alu)",
        resource="alu",
    ),
    Pair(
        "a KAN layer's cubic B-spline basis computed over the whole grid by the Cox-de Boor recursion where the "
        "four uniform cubic weights serve",
        "calib_kan_bspline",
        "v0",
        "v1",
        "move_work",
        planted="Y [4, N] fp16 = four cubic splines (k = 3, a uniform grid of 5 intervals over [-1, 1], 12 knots "
        "loaded from T, coefficients C [4, 8] fp32) of 2^24 fp16 inputs, every one of the 8 basis functions "
        "computed by the Cox-de Boor recursion as KAN's reference code does (11 degree-0 indicators, then 10 + 9 "
        "+ 8 terms of two divisions by knot differences: 54 divisions, ~300 instructions an input) for 10 bytes "
        "an input; fix: the input's interval and fraction from the uniform grid and the four closed-form uniform "
        "cubic B-spline weights, 16 gathers from the 128-byte coefficient table (memory-bound); the same values "
        "up to fp32 rounding (the needed values by a costlier method; resource None: the divisions' MUFU "
        "reciprocals, their fix-ups and the recursion's multiply-adds spread over the MUFU, the FMA pipes and "
        "the issue slots, no one pipe owns it)",
    ),
]

# The thirty-first held-back set (recorded-heldout31/): designed by a helper who did not read the model, causes and
# resources fixed here before any GPU number; cheapest to record first (the two command pairs, then the kernels).
HELDOUT31_PAIRS = [
    Pair(
        "a tensor detached and copied through NumPy every step (torch.from_numpy(t.cpu().numpy()).to(device)) "
        "where a device clone serves",
        "numpy_round_trip.py",
        "bad",
        "good",
        "copy",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.7e10, "bytes": 1.8e8, "dtype": "float32", "tensor_cores": False}},
        planted="a teacher MLP 1024 -> 1024 -> 1024 (fp32) on x [4096, 1024], its output t [4096, 1024] fp32 "
        "(16 MiB) copied as a target by torch.from_numpy(t.detach().cpu().numpy()).to(dev) at every step, then "
        "folded into a running average: a pageable device-to-host copy into new host memory and a pageable "
        "host-to-device copy, the host waiting on both and the GPU idle; fix: t.detach().clone() on the GPU; the "
        "same values bit for bit (host<->device transfers in the step: cause copy, resource None)",
    ),
    Pair(
        "a stateless sampler regenerating the epoch's random permutation of the whole GPU-resident dataset "
        "(torch.randperm(N) from the epoch's seed) at every step to take one batch, where the permutation made "
        "once an epoch serves",
        "epoch_perm_per_step.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 7.1e10, "bytes": 2.8e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="batches of 32768 rows of a GPU-resident dataset X [2^26, 32] bf16 scored by an MLP 32 -> 1024 "
        "-> 1024 -> 1 (bf16); the sampler is stateless: at every step it re-seeds a CUDA generator with the "
        "epoch's seed and calls torch.randperm(2^26) (random 64-bit keys, then a CUB radix sort of 2^26 "
        "key-index pairs: several DRAM passes) to take the step's slice; fix: the permutation made once when the "
        "epoch starts (2048 steps an epoch) and sliced at every step; the same batches and scores (the needed "
        "indices by a costlier method, the sort's passes memory-bound: cause move_work, resource dram)",
        resource="dram",
    ),
    Pair(
        "a byte histogram counted by comparing every element with all 256 bins (a one-hot tile summed) where a "
        "per-program ballot histogram (tl.histogram) serves",
        "calib_hist_onehot",
        "v0",
        "v1",
        "move_work",
        planted="counts [1024, 256] int32 of 2^24 uint8 values, a 16384-element chunk a program: v0 adds the "
        "[32, 256] tile (x[:, None] == bins[None, :]) into a [32, 256] int32 accumulator 32 elements at a time "
        "(an integer compare and an add for every element and every bin: ~512 integer operations an element); "
        "fix: tl.histogram over 4096 elements at a time (warp ballots and population counts, the warps merged in "
        "shared memory): memory-bound; the same counts exactly (the needed counts by a costlier method, its work "
        "the integer compares and adds: resource alu)",
        resource="alu",
    ),
    Pair(
        "tridiagonal systems solved as dense systems by Gauss-Jordan elimination where the Thomas algorithm "
        "serves",
        "calib_tridiag_dense",
        "v0",
        "v1",
        "move_work",
        planted="65536 diagonally dominant tridiagonal systems of order 32 (fp32, interleaved [32, B]): v0 one "
        "program a system assembles the dense [32, 32] matrix from the three diagonals in registers and runs 32 "
        "Gauss-Jordan steps (pivot row and column by masked sums over the tile, the whole tile and the right-hand "
        "side updated: ~160,000 operations and 64 block reductions a system); fix: the Thomas algorithm (forward "
        "sweep, back substitution) a lane a system, ~300 operations, coalesced across the systems: memory-bound; "
        "the same solutions up to fp32 rounding (the needed solution by a costlier method; resource None: the "
        "elimination's selects, adds and multiply-adds, the reductions' shuffles, shared-memory round trips and "
        "barriers, no one pipe owns it)",
    ),
]

# Held-back set 32 (designed blind, its causes and resources committed before any GPU number; cheapest first).
HELDOUT32_PAIRS = [
    Pair(
        "a 3x3 max pool computed through F.unfold (the nine shifted copies of the map materialised, then amax) "
        "where F.max_pool2d serves",
        "unfold_maxpool.py",
        "bad",
        "good",
        "over_fetch",
        mode="nsys",
        command=True,
        models={"step": {"flops": 4.1e8, "bytes": 2.1e8, "dtype": "bfloat16", "tensor_cores": False}},
        planted="a non-negative feature map x [64, 64, 112, 112] bf16 (103 MB) max-pooled 3x3, stride 1, padding 1 "
        "at every step by F.unfold(x, 3, padding=1).view(n, c, 9, h, w).amax(2): the unfolded [64, 576, 12544] "
        "bf16 tensor (925 MB) written by the im2col kernel and read back by the reduction; fix: "
        "F.max_pool2d(x, 3, stride=1, padding=1), x read once and the result written; the same values exactly "
        "(bytes beyond what the result needs moved through DRAM: cause over_fetch, resource dram)",
        resource="dram",
    ),
    Pair(
        "a per-module tracing helper naming its caller with inspect.stack() at every forward where "
        "sys._getframe(1) serves",
        "caller_lookup_per_layer.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 4.1e11, "bytes": 1.0e9, "dtype": "bfloat16", "tensor_cores": True}},
        planted="a residual MLP of 12 blocks (nn.Modules: x + gelu(x @ W), W [2048, 2048] bf16, x [4096, 2048] "
        "bf16) whose every module's forward (block and inner mlp: 24 a step) first calls a tracing helper that "
        "finds its caller's name with inspect.stack()[1].function (a FrameInfo built for every frame of an 11-14 "
        "frame stack: source files and modules resolved, inspect.getmodule scanning sys.modules), ~0.1-0.3 ms on "
        "the host a call while the GPU waits for the next launch; fix: sys._getframe(1).f_code.co_name; the same "
        "records and outputs (Python work on the host between launches sets the step: cause host, resource None)",
    ),
    Pair(
        "a 0.4 %-dense matrix (64 nonzeros a row) applied as a dense fp16 matrix in a propagation step y = A x "
        "where its ELL form serves",
        "calib_sparse_as_dense",
        "v0",
        "v1",
        "over_fetch",
        planted="y [16384] fp32 = A x, A [16384, 16384] with 64 nonzeros a row: v0 streams the dense fp16 A "
        "(512 MiB, 99.6 % zeros) 8 rows a program, 1024 columns at a time, products with x accumulated in fp32 "
        "(2 bytes read for every entry, zeros included); fix: the ELL values (fp16) and column indices (int32), "
        "[64, R] column-major, loaded 64 rows a program at once, x gathered from cache (6 bytes a nonzero); the "
        "same product up to fp32 summation order (bytes the result does not need read from DRAM: cause "
        "over_fetch, resource dram)",
        resource="dram",
    ),
    Pair(
        "a softmax backward through each row's N x N outer-product Jacobian (s s^T tiles times the upstream "
        "gradient) where the vector-Jacobian identity s * (g - <s, g>) serves",
        "calib_softmax_jacobian",
        "v0",
        "v1",
        "move_work",
        planted="dx [8192, 1024] fp32 of a row softmax s from the upstream gradient g: v0 one program a row "
        "forms the outer-product part of the Jacobian tile by tile ([128, 128] tiles of -(s_i s_j) g_j: an FP32 "
        "multiply and an FMA for every (i, j) pair, ~2 N^2 = 2.1e6 FP32 operations a row), sums each tile over j "
        "and adds the diagonal s_i g_i; fix: one dot product <s, g> a row and dx = s * (g - <s, g>): memory-bound; "
        "the same gradient up to fp32 rounding (the needed gradient by a costlier method, its work the FP32 "
        "multiplies and FMAs: resource fma)",
        resource="fma",
    ),
]


HELDOUT33_PAIRS = [
    Pair(
        "a label-smoothed cross-entropy through materialised one-hot soft targets (F.one_hot, cast, smoothed, "
        "multiplied into the full log_softmax) where F.cross_entropy(label_smoothing=eps) serves",
        "label_smoothing_onehot.py",
        "bad",
        "good",
        "over_fetch",
        mode="nsys",
        command=True,
        models={"step": {"flops": 6.6e8, "bytes": 1.6e9, "dtype": "float32", "tensor_cores": False}},
        planted="the loss of logits [4096, 32000] fp32 (524 MB) against int64 targets with label smoothing 0.1, "
        "written as t = F.one_hot(y, V).float() * (1 - eps) + eps / V; -(t * F.log_softmax(x, -1)).sum(-1).mean(): "
        "the int64 one-hot (1 GB, zero-filled then scattered), its float copy, the two smoothing passes, the "
        "log-probabilities and their product with t, each a [4096, 32000] tensor written to DRAM and read back "
        "(~7.9 GB a step); fix: F.cross_entropy(x, y, label_smoothing=eps) from the log-probabilities and the "
        "target indices (~1.6 GB); the same loss up to fp32 rounding (bytes beyond what the result needs moved "
        "through DRAM: cause over_fetch, resource dram)",
        resource="dram",
    ),
    Pair(
        "the global gradient norm computed over one concatenated fp32 copy of every gradient (torch.cat of the "
        "flattened upcast gradients) where a foreach norm over the gradients in place serves",
        "grad_norm_concat.py",
        "bad",
        "good",
        "over_fetch",
        mode="nsys",
        command=True,
        models={"step": {"flops": 9.4e8, "bytes": 9.4e8, "dtype": "bfloat16", "tensor_cores": False}},
        planted="the norm of 49 bf16 gradients (8 transformer layers at width 2048 and a [32000, 2048] embedding: "
        "4.7e8 elements, 0.94 GB) computed as torch.cat([g.flatten().float() for g in grads]).norm(): every "
        "gradient read and written as an fp32 copy (1.9 GB), the copies read and concatenated into a new 1.9 GB "
        "buffer, the buffer read for the norm (~8.5 GB a step); fix: "
        "torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads, 2, dtype=torch.float32))), each gradient "
        "read once in place; the same norm up to fp32 summation order (bytes beyond what the result needs moved "
        "through DRAM: cause over_fetch, resource dram)",
        resource="dram",
    ),
    Pair(
        "an interpolant through 32 Chebyshev nodes evaluated by the O(n^2) Lagrange formula (the n - 1 factors "
        "of every basis polynomial multiplied at every point) where the barycentric formula serves",
        "calib_lagrange_interp",
        "v0",
        "v1",
        "move_work",
        planted="p(t) at 2^22 fp32 points through n = 32 Chebyshev points of the second kind: v0 for every node j "
        "multiplies the 31 factors (t - x_k), k != j, at every point (an FP32 subtract and multiply a factor, "
        "~2 n^2 = 2048 FP32 operations a point) and adds y_j / prod_k (x_j - x_k) times it; fix: the barycentric "
        "formula of the second kind with the weights (-1)^j (halved at the ends) known in advance, a subtract, "
        "a division and two adds a node a point; the same values up to fp32 rounding (the needed values by a "
        "costlier formula, its work the FP32 subtracts and multiplies: cause move_work, resource fma)",
        resource="fma",
    ),
    Pair(
        "ranks within each row counted by comparing every element with every other (N^2 compares a row) where "
        "sorting the row once serves",
        "calib_rank_count",
        "v0",
        "v1",
        "move_work",
        planted="the stable-sort rank of every element of x [512, 2048] fp32 in its row (keys: the float bits "
        "<< 32 plus the column): v0 one program a row, for each of the 2048 columns the key of x[j] compared with "
        "every element's key and the count of smaller keys incremented (N^2 = 4.2e6 64-bit integer compares and "
        "adds a row); fix: the row's keys sorted once by tl.sort (a bitonic network, 66 compare-exchange stages) "
        "and each sorted position stored at the column in the key's low bits; the same ranks exactly (the needed "
        "ranks by a costlier method, its work integer compares and adds: cause move_work, resource alu)",
        resource="alu",
    ),
]

# The thirty-fourth held-back set (recorded-heldout34/): designed blind (causes and resources committed before any
# GPU number), cheapest first (the two command pairs, then the kernels with the shorter bad version first).
HELDOUT34_PAIRS = [
    Pair(
        "a CLIP-style zero-shot classifier re-encoding its fixed class prompts with the frozen text encoder for "
        "every image batch where the text features encoded once serve",
        "clip_prompts_per_batch.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.4e11, "bytes": 3.2e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="zero-shot logits = 100 img txt^T for 256 images (64 patch tokens each, D = 512 bf16) through a "
        "2-block residual MLP image encoder (hidden 2048) against 1000 class prompts (16 tokens each) through a "
        "6-block text encoder of the same shape: the bad step encodes the unchanged prompts again at every batch "
        "(12 bf16 GEMMs of 34 GFLOP, 4.0e11 FLOPs, their GELUs and adds: ~3x the image side's work); fix: the text "
        "features encoded once before the loop; the same logits exactly (tensor-core work whose result never "
        "changes, the needed features by a costlier method: cause move_work, resource tensor)",
        resource="tensor",
    ),
    Pair(
        "an inference function loading its class-label map from a JSON file at every call where the map loaded "
        "once serves",
        "label_map_per_call.py",
        "bad",
        "good",
        "host",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.2e11, "bytes": 1.7e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="predict() of a 3-layer bf16 MLP classifier (2048 -> 4096 -> 4096 -> 8000, batch 1024, ~0.2-0.35 "
        "ms of GEMMs) that starts with labels = json.load(open(path)) for an 8000-entry label map (~0.6 MB of "
        "JSON, ~1-2.5 ms of parsing on the host a call) while the GPU waits for the next launch; fix: the map "
        "loaded once before the loop; the same outputs (Python work on the host between launches sets the step: "
        "cause host, resource None)",
    ),
    Pair(
        "a DCT-II of every frame with a cosine evaluated for every (coefficient, sample) term where the constant "
        "basis built once and a matrix product serve",
        "calib_dct_cosine",
        "v0",
        "v1",
        "move_work",
        planted="Y [8192, 256] fp32 = the unnormalised DCT-II of 8192 frames of 256 samples: v0 one program a "
        "frame computes cos(pi ((2n + 1) k mod 4N) / 2N) for every term (an integer multiply-and-mask, an "
        "int-to-float conversion and a cosine on the special-function unit: 65536 a frame, 5.4e8 in all) and "
        "multiplies it into the samples; fix: the basis C [256, 256] built once (as torchaudio's create_dct) and "
        "Y = X C^T by tl.dot (TF32), memory-bound; the same transform up to TF32 rounding (the needed work by a "
        "costlier method, its cost the cosines and conversions: resource xu)",
        resource="xu",
    ),
    Pair(
        "primality flags by trial division with every candidate divisor d < n where the divisors up to sqrt(n) "
        "serve",
        "calib_trial_division",
        "v0",
        "v1",
        "move_work",
        planted="flags [65536] int32 of values 2 <= n < 4096: v0 one element a lane tries every d in [2, 4096) "
        "(n % d: a 32-bit integer remainder sequence, 4094 an element, 2.7e8 in all) and marks n composite where "
        "d < n divides it; fix: d in [2, 64] with d * d <= n (63 remainders an element); the same flags exactly "
        "(the needed test by a costlier method, 65x the divisors that decide it, its cost the integer remainder "
        "instructions: resource alu)",
        resource="alu",
    ),
]

# The thirty-fifth held-back set (blind: designed without reading the diagnosis; causes and resources committed
# before any GPU number; recorded in tests/calibration/recorded-heldout35/, its README). Cheapest first.
HELDOUT35_PAIRS = [
    Pair(
        "a spectral model's FFTs run with the cuFFT plan cache switched off (max_size = 0: a plan created and "
        "destroyed at every transform) where the default cache serves",
        "fft_plan_cache_off.py",
        "bad",
        "good",
        "cuda_api",
        mode="nsys",
        command=True,
        models={"step": {"flops": 2.5e9, "bytes": 6.8e8, "dtype": "float32", "tensor_cores": False}},
        planted="four FNO-style spectral layers x = gelu(irfft2(rfft2(x) * K) + x) on a [32, 16, 128, 128] fp32 "
        "field (28 memory-bound kernels, ~0.25-0.4 ms a step) with torch.backends.cuda.cufft_plan_cache.max_size "
        "= 0: every rfft2 / irfft2 creates its cuFFT plan (cufftCreate, cufftXtMakePlanMany: host planning, "
        "device allocations and uploads) and destroys it after the transform (frees): eight plan setups a step "
        "(~0.1-0.5 ms each); fix: the default cache (the two plans built once); the same outputs exactly "
        "(costly library and CUDA API setup calls in the loop: cause cuda_api, resource None)",
    ),
    Pair(
        "greatest common divisors by Euclid's subtraction form (up to max(a, b) - 1 steps a pair) where the "
        "remainder form (the Lame bound's steps) serves",
        "calib_gcd_subtract",
        "v0",
        "v1",
        "move_work",
        planted="g [131072] int32 = gcd(a, b) of pairs below 4096: v0 one pair a lane, 4094 steps of the "
        "subtraction form (a -= b if a > b, b -= a if b > a: two compares, two subtractions, two selects, ~6 "
        "integer instructions a step, 3.2e9 lane-instructions in all), its worst case, as a branch-free kernel "
        "must loop; fix: 18 steps of the remainder form (a guarded 32-bit remainder, ~25 instructions a step); "
        "the same gcds exactly (the needed result by a costlier method, ~55x the instructions: resource alu)",
        resource="alu",
    ),
    Pair(
        "a dilated (a trous) convolution applied through its filter expanded with inserted zeros (65 taps, 56 of "
        "them zero) where the 9 real taps at the dilation's stride serve",
        "calib_dilated_holes",
        "v0",
        "v1",
        "move_work",
        planted="Y [65536, 128] fp32 = sum over 9 taps at dilation 8 of X[t + (k - 4) 8] @ W[k], X fp16 "
        "channels-last, W [9, 128, 128] fp16: v0 a [128, 128] output tile a program loops over the 65 taps of the "
        "zero-expanded filter (built once, as the naive à-trous code stores it), loading the shifted input tile "
        "and the tap and multiplying them by tl.dot: 65 MMAs a tile, 56 by zero matrices (1.4e11 FLOPs); fix: the "
        "9 real taps, the input shifted by (k - 4) 8 (1.9e10 FLOPs); the same result exactly (the zero taps add "
        "zeros); the needed convolution by a costlier method, 7.2x the MMAs and their operand loads: resource "
        "tensor",
        resource="tensor",
    ),
]

# The thirty-sixth held-back set (blind: designed without reading the diagnosis; causes and resources committed
# before any GPU number; recorded in tests/calibration/recorded-heldout36/, its README). Cheapest first.
HELDOUT36_PAIRS = [
    Pair(
        "calendar dates from day counts by walking the calendar a year at a time (130 year steps a date) where "
        "the closed-form civil-from-days conversion serves",
        "calib_civil_date",
        "v0",
        "v1",
        "move_work",
        planted="out [1048576] int32 = YYYYMMDD of day counts since 1970-01-01 (dates 1970-2099): v0 one date a "
        "lane walks the calendar a year at a time (130 steps, its worst case, as a branch-free kernel must loop: "
        "the Gregorian leap rule's three remainders by constants, the year's length, a compare and two selects, "
        "~20 integer instructions a step), then 11 month steps: ~2700 integer instructions a date, 2.8e9 in all; "
        "fix: Hinnant's closed-form civil_from_days (~50 integer instructions a date); the same dates exactly "
        "(the needed result by a costlier method, ~50x the instructions: resource alu)",
        resource="alu",
    ),
    Pair(
        "an SPH density summed over all N^2 particle pairs (every pair beyond the smoothing length tested and "
        "discarded) where a uniform cell grid's 3 x 3 neighbouring cells serve",
        "calib_sph_allpairs",
        "v0",
        "v1",
        "move_work",
        planted="rho [24576] fp32 = sum over j of the poly6 kernel (1 - r_ij^2)^3 (r < h = 1) of 24576 2-D "
        "particles stored in cell order (one a unit cell of a 192 x 128 grid): v0 every particle against all N "
        "in [32, 128] tiles (dx, dy, r^2, 1 - r^2, its cube, the cutoff select and the add: ~10 FP32 "
        "instructions a pair, 6.0e8 pairs, all but 9 N of them beyond h); fix: the particles of the 3 x 3 "
        "neighbouring cells (9 a particle); the same density up to fp32 rounding (the needed sum by a costlier "
        "method, ~2700x the pairs that contribute, its cost the FP32 pair arithmetic: resource fma)",
        resource="fma",
    ),
    Pair(
        "per-token log-probabilities [B, S, V] copied to the host whole to pick the target tokens' values there "
        "where gathering on the GPU and copying the [B, S] values serves",
        "logprobs_to_host.py",
        "bad",
        "good",
        "copy",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.7e10, "bytes": 1.6e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="sequence scoring: an LM head (h [4, 32, 2048] bf16 @ W [2048, 32000] bf16) and log_softmax "
        "in fp32 ([4, 32, 32000], 16.4 MB; ~60-120 us of GPU work a step); bad: logp.cpu().gather(-1, "
        "ids.cpu()[..., None]): the whole tensor copied device-to-host (pageable, ~1-2 ms) to take 128 values; "
        "fix: gathered on the GPU, the [4, 32] values copied (512 bytes); the same scores exactly (a host<->"
        "device transfer of data the result does not need sets the step: cause copy, resource None)",
    ),
    Pair(
        "many right-hand sides of one linear system solved with its matrix broadcast to the batch "
        "(torch.linalg.solve(A.expand(R, n, n), b): R LU factorisations of the same matrix) where one "
        "factorisation and a solve with R columns serves",
        "shared_matrix_solve.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.8e7, "bytes": 5.9e5, "dtype": "float32", "tensor_cores": False}},
        planted="a damped system (A0 + lambda_t I) x = b, n = 128 fp32, for 512 right-hand sides a step (the "
        "matrix changes every step); bad: the matrix expanded to [512, 128, 128] for torch.linalg.solve (a 34 "
        "MB copy, a batched LU of 512 identical matrices, 7.2e8 FLOPs, and 512 one-column solves: ~0.5-1.5 "
        "ms); fix: one LU (1.4e6 FLOPs) and one solve with the 512 columns (~60-150 us); the same solutions up "
        "to rounding (the needed factorisation recomputed 512 times, library kernels: cause move_work, "
        "resource None)",
    ),
]

HELDOUT37_PAIRS = [
    Pair(
        "winding numbers of points about a polygon by summing the angles its edges subtend (two atan2 an edge, "
        "Bourke's Angle2D) where Sunday's signed crossings of the point's ray serve",
        "calib_winding_angles",
        "v0",
        "v1",
        "move_work",
        planted="w [2^21] int32 = the winding number of each point (fp32 x, y) about a 64-edge polygon winding "
        "twice round the origin: v0 one point a lane, for each edge the angle it subtends as atan2(b) - atan2(a) "
        "wrapped into (-pi, pi] (two atan2 an edge, each a division min/max, an 8-FMA polynomial and octant "
        "selects: ~60 instructions an edge), summed, w = round(sum / 2 pi); fix: Sunday's crossing form (an "
        "upward crossing with the point left of the edge +1, a downward one right of it -1: a cross product and "
        "four compares, ~12 instructions an edge); the same winding numbers (the needed result by a costlier "
        "method, ~5x the instructions, atan2's division and polynomial on the FP32 pipes: resource fma)",
        resource="fma",
    ),
    Pair(
        "causal linear attention computed in its quadratic parallel form (the masked score blocks multiplied "
        "into V) where the chunkwise recurrent form (a [D, D] state carried over 64-row chunks) serves",
        "calib_linattn_chunks",
        "v0",
        "v1",
        "move_work",
        planted="O [32, 4096, 64] fp32 = sum over j <= i of (q_i . k_j) v_j, Q, K, V fp16 (linear attention, "
        "no softmax): v0 a program a block of 128 queries loops over the key blocks of 64 at or before the "
        "diagonal (none after it: no MMA on a zero tile), s = q k^T by tl.dot, the causal mask, o += s v by "
        "tl.dot: O(L^2 D) a head, 7.0e10 FLOPs; fix: a program a head and a 16-wide V slice walks 64 chunks of "
        "64 rows, o = mask(q k^T) v + q S, S += k^T v (the state in fp32): O(L D^2), ~4e9 FLOPs; the same result "
        "to fp16 rounding (the needed result by a costlier method, ~16x the MMAs and their operand loads: "
        "resource tensor)",
        resource="tensor",
    ),
    Pair(
        "per-head projections of a shared activation written as a broadcasting torch.matmul (x.unsqueeze(1) @ "
        "W, both operands expanded and copied to the [B, H] batch) where one einsum GEMM over the heads' weights "
        "serves",
        "broadcast_matmul.py",
        "bad",
        "good",
        "over_fetch",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.4e11, "bytes": 5.4e8, "dtype": "bfloat16", "tensor_cores": True}},
        planted="eight per-head projections a step of [64, 512, 512] bf16 activations by [8, 512, 64] bf16 "
        "weights: torch.matmul(x.unsqueeze(1), W) broadcasts [64, 1] x [8] to [64, 8] by expanding both "
        "operands and reshaping them for bmm, which copies them: x materialised 8 times (268 MB written) and W "
        "64 times (34 MB) a projection, then a batched product reads the copies back; fix: torch.einsum("
        "'btd,hde->bhte', x, W), one [32768, 512] x [512, 512] GEMM a projection, the result a permuted view; the "
        "same products (bytes moved through DRAM beyond what the result needs: cause over_fetch, resource dram)",
        resource="dram",
    ),
    Pair(
        "per-point Jacobians of a tall coordinate network (R^3 -> R^32) computed in reverse mode (vmap(jacrev): "
        "a VJP a row) where forward mode (vmap(jacfwd): a JVP a column) serves",
        "jacrev_tall.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.8e10, "bytes": 3e8, "dtype": "float32", "tensor_cores": False}},
        planted="the Jacobian [32, 3] of an MLP 3 -> 256 -> 256 -> 256 -> 32 (tanh, fp32, default matmul "
        "precision) at 16384 points a step by vmap(jacrev(f)): the forward once and 32 batched vector-Jacobian "
        "products (GEMMs of [16384 x 32, 256] rows and the tanh derivative on 537 MB tensors a layer, ~1.5e11 "
        "FLOPs); fix: vmap(jacfwd(f)): the forward with 3 tangents (~1.8e10 FLOPs); the same Jacobian to fp32 "
        "rounding (the needed result by a costlier method, ~8x the sweeps; resource None: fp32 GEMMs on the FMA "
        "pipes and memory-bound derivative passes share the extra time)",
    ),
]

# The thirty-eighth held-back set (2026-11-29): designed by a helper who did not read the model; causes and
# resources set from the designs before any GPU number (recorded-heldout38/README.md), cheapest first.
HELDOUT38_PAIRS = [
    Pair(
        "sums of sinusoids of large arguments (|x| >= 1.5e5) through libdevice sinf's Payne-Hanek slow path where "
        "a two-constant Cody-Waite reduction to [-pi, pi] first serves",
        "calib_sin_bigarg",
        "v0",
        "v1",
        "move_work",
        planted="y [2^20] fp32 = sum over 32 terms of a_k sin(t w_k), t in [1.5e5, 1e6), w_k in [1, 3): v0 "
        "libdevice.sin on the raw fp32 products: every call past sinf's fast-path bound (105615) takes its slow "
        "path, the Payne-Hanek reduction (a loop of six table loads and 32 x 32-bit integer multiply-adds, the "
        "shifts and the 64-bit conversion: ~245 SASS instructions a term, mostly IMAD, ISETP, SHF, LOP3); fix: q = "
        "rint(x / 2 pi), r = fma(-q, C1, x), r = fma(-q, C2, r) (C1 = fl32(2 pi), C2 its remainder), then sinf's "
        "fast path (~45 instructions a term); the same sums to fp32 rounding (the needed result by a costlier "
        "method, ~5x the instructions, spread over the integer-multiply and ALU pipes: resource issue)",
        resource="issue",
    ),
    Pair(
        "the first hits of camera rays on a signed-distance scene found by marching 512 fixed steps and bisecting "
        "where sphere tracing (each step the distance the function returns) serves",
        "calib_sphere_trace",
        "v0",
        "v1",
        "move_work",
        planted="t [2^18] fp32 = the distance along each ray of a 512 x 512 pinhole camera to the first of "
        "eight unit spheres (16 for a miss), the scene's distance sqrt(min_i |p - c_i|^2) - 1: v0 the distance "
        "evaluated at 512 fixed steps of 1/32 along every ray (branch-free, the first sample inside kept), then "
        "16 bisection steps: 528 evaluations a ray (~70 instructions each, 3/4 FP32 FMAs, multiplies and adds); "
        "fix: sphere tracing, t += d(t) for 96 steps (a ray done at d <= 1e-4 or t >= 16): 96 evaluations; the "
        "same hits to ~1e-4 but for grazing rays (the needed result by a costlier method, 5.5x the evaluations "
        "on the FP32 pipes: resource fma)",
        resource="fma",
    ),
    Pair(
        "the 2-D DFT of a batch of images computed as two dense products with the complex DFT matrices (F_H X "
        "F_W^T) where torch.fft.fft2 serves",
        "dft_matmul.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 6.7e8, "bytes": 1.7e8, "dtype": "float32", "tensor_cores": False}},
        planted="the mean power spectrum of 128 fp32 images of 256 x 256 a step: bad the images cast to "
        "complex64 and multiplied by the DFT matrices, X @ F_W^T and F_H @ (.) (two complex GEMMs of 8 x 32768 x "
        "256 x 256 FLOPs, 3.4e10 a step, default fp32 precision: the FP32 pipes, no TF32), a transposed copy "
        "between; fix: torch.fft.fft2 (cuFFT, O(n^2 log n)); the same spectrum to fp32 rounding (the needed "
        "result by a costlier method: cause move_work, resource fma)",
        resource="fma",
    ),
    Pair(
        "lower-triangular systems solved with the general torch.linalg.solve (a pivoted LU of a matrix already "
        "triangular, then two triangular solves) where torch.linalg.solve_triangular serves",
        "tri_solve_lu.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 2.7e8, "bytes": 3.4e7, "dtype": "float32", "tensor_cores": False}},
        planted="Z = L^-1 X a step for 256 fixed lower-triangular L [128, 128] fp32 and X [256, 128, 64]: bad "
        "torch.linalg.solve(L, X): cuBLAS batched LU with partial pivoting of the 256 triangular matrices, the "
        "permutation, two batched triangular solves (and one host wait for the factorisation's info); fix: "
        "torch.linalg.solve_triangular(L, X, upper=False), one batched triangular solve; the same Z to fp32 "
        "rounding (the needed result by a costlier method; resource None: the batched LU's dependent panel "
        "steps in small kernels, no one pipe or memory level saturated)",
    ),
]


HELDOUT39_PAIRS = [
    Pair(
        "a top-p (nucleus) cutoff computed by scanning every block of each sorted row of probabilities where "
        "stopping at the first block past p serves",
        "calib_topp_scan",
        "v0",
        "v1",
        "over_fetch",
        planted="k [1024] int32 = the number of tokens a top-p (p = 0.9) sampler keeps from each row of probs "
        "[1024, 131072] fp32 sorted in descending order (Zipf rows, nuclei of ~10 to ~3400 tokens): v0 a "
        "program a row walks all 64 blocks of 2048 with a for loop (Triton has no break), the exclusive prefix "
        "sums compared with p and counted, the carried mass added: every row read whole, 537 MB; fix: the same "
        "block step in a while loop that stops once the carried mass reaches p (later blocks cannot change the "
        "count): one or two blocks a row, ~11 MB; the same counts (bytes read beyond what the result needs, "
        "the rows' tails past the cutoff: cause over_fetch, resource dram)",
        resource="dram",
    ),
    Pair(
        "an HMM forward pass run in the log domain (log-sum-exp over the predecessor states: an exponential a "
        "transition term, S^2 a step) where Rabiner's scaled forward recursion serves",
        "calib_hmm_logspace",
        "v0",
        "v1",
        "move_work",
        planted="ll [32768] fp32 = log P(o_1..o_128) of 32768 sequences (16 states, 16 symbols, observations "
        "time-major int32): v0 a program a block of 32 sequences keeps alpha in the log domain and at each step "
        "computes m = max_i alpha_i and alpha'_j = m + log sum_i exp(alpha_i - m + log A_ij) + log B[o_t, j] "
        "over a [32, 16, 16] tile (256 exponentials and 16 logarithms a sequence a step, 1.07e9 exponentials); "
        "fix: the same block and tile in probabilities, alpha'_j = (sum_i alpha_i A_ij) B[o_t, j], c = sum_j "
        "alpha'_j, alpha' /= c, ll += log c (256 multiply-adds and one logarithm a sequence a step); the same "
        "log-likelihoods to fp32 rounding (the needed result by a costlier method, an exponential a transition "
        "term on the special-function units, 16 a clock an SM: resource xu)",
        resource="xu",
    ),
    Pair(
        "the inverse of a permutation computed by sorting it (torch.argsort: a radix sort of the 64-bit keys "
        "and their indices) where one scatter (inv[perm] = arange) serves",
        "argsort_inverse.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 8.4e6, "bytes": 2.0e8, "dtype": "float32", "tensor_cores": False}},
        planted="the inverse of one of four random permutations of 2^23 int64 indices a step (the "
        "mixture-of-experts unpermute idiom): torch.argsort(perm), a CUB radix sort of the int64 keys with "
        "int64 values (eight 8-bit digit passes, each reading and writing 128 MB of keys and values, plus the "
        "histogram and the index initialisation: ~2 GB through DRAM); fix: inv.scatter_(0, perm, ar) with ar = "
        "arange made once (perm and ar read, inv written: ~200 MB); the same inverse exactly (the needed result "
        "by a costlier method, the sort's passes through DRAM: resource dram)",
        resource="dram",
    ),
    Pair(
        "a GroupNorm with one group (GroupNorm(1, C)) on 8 large feature maps, its statistics computed by one "
        "thread block per sample (8 blocks for 132 SMs), where a split reduction (var_mean) and one addcmul serve",
        "groupnorm_one_group.py",
        "bad",
        "good",
        "few_blocks",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.0e8, "bytes": 3.0e8, "dtype": "float32", "tensor_cores": False}},
        planted="F.group_norm(x, 1, weight, bias) of a [8, 48, 256, 256] fp32 activation a step: PyTorch's "
        "RowwiseMomentsCUDAKernel is launched with N x G = 8 blocks of 512 threads, each walking one sample's "
        "3.1 M elements (12.6 MB) with a Welford update an element while 124 SMs idle, then the fused "
        "elementwise apply over the whole GPU; fix: torch.var_mean(x.view(8, -1), dim=1) (a split reduction "
        "over the whole GPU), each (sample, channel)'s scale and shift from [8] and [48] vectors, and one "
        "torch.addcmul(shift, x, scale); the same result to fp32 rounding (a grid of 8 blocks for 132 SMs: "
        "cause few_blocks; resource None)",
    ),
]

HELDOUT40_PAIRS = [
    Pair(
        "per-tensor fake quantisation in one kernel whose every program rescans the whole tensor for its absmax, "
        "where one partial maximum per program and a second kernel serve",
        "calib_absmax_rescan",
        "v0",
        "v1",
        "over_fetch",
        planted="y [2^21] fp32 = s * clamp(floor(x / s + 0.5), -127, 127) with s = max|x| / 127 (per-tensor int8 "
        "fake quantisation of an 8 MB tensor): v0 256 programs of 8192 elements, each first loops over all of x "
        "(chunks of 4096, a running max of |x|) and then quantises its own block: the tensor read 256 times, 2.1 "
        "GB, the first pass from DRAM, the rest from L2; fix: each program writes the max of its own block (256 "
        "partials), then a second kernel whose programs reduce the 256 partials (1 KB) and quantise their block: "
        "x read twice, 16 MB; the same output (bytes moved beyond what the result needs, the whole tensor re-read "
        "by every program through L2: cause over_fetch, resource l2)",
        resource="l2",
    ),
    Pair(
        "rows of two sorted runs put in order by a full bitonic sort (tl.sort: 66 compare-exchange stages for "
        "2048 elements) where one bitonic merge (the second run read in reverse, 11 half-cleaner stages) serves",
        "calib_merge_by_sort",
        "v0",
        "v1",
        "move_work",
        planted="y [4096, 2048] fp32 = each row of x in ascending order, the row's two halves each already "
        "ascending: v0 a program a row (4 warps) calls tl.sort on the row, a bitonic sorting network of "
        "log2(n) (log2(n) + 1) / 2 = 66 compare-exchange stages (selects, warp shuffles, shared-memory exchanges "
        "for the long distances); fix: the second run loaded in reverse (the row bitonic) and one bitonic merge, "
        "11 half-cleaner stages of a min and a max a pair; the same values exactly (the needed ordering by a "
        "costlier method, a sorting network where a merging network serves: compare, select and shuffle "
        "instructions, resource issue)",
        resource="issue",
    ),
    Pair(
        "bags of embeddings summed by gathering every row into a [B, L, D] tensor and reducing it "
        "(F.embedding(idx, table).sum(1)) where F.embedding_bag(mode='sum') serves",
        "embedding_bag_sum.py",
        "bad",
        "good",
        "fusion",
        mode="nsys",
        command=True,
        models={"step": {"flops": 1.3e8, "bytes": 1.2e7, "dtype": "float32", "tensor_cores": False}},
        planted="the sums of 8192 bags of 64 rows of an 8192 x 256 fp32 table (8 MB, L2-resident) a step: "
        "F.embedding(idx, table) writes the gathered [8192, 64, 256] fp32 rows (537 MB) to DRAM and .sum(1) "
        "reads them back; fix: F.embedding_bag(idx, table, mode='sum'), one kernel gathering each bag's rows "
        "and accumulating them on chip, only the [8192, 256] sums (8 MB) written; the same sums to fp32 "
        "rounding (an intermediate's round trip through DRAM between two kernels where one keeps it on chip: "
        "cause fusion, resource dram)",
        resource="dram",
    ),
    Pair(
        "determinants of a batch of 3 x 3 matrices by torch.linalg.det (a batched LU factorisation with "
        "pivoting of every matrix) where the scalar triple product a0 . (a1 x a2) serves",
        "det3_lu.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 7.1e7, "bytes": 1.7e8, "dtype": "float32", "tensor_cores": False}},
        planted="det of one of two batches of 2^22 3 x 3 fp32 matrices (151 MB) a step: torch.linalg.det, the "
        "batch copied to column-major order, cuBLAS getrfBatched (an array of device pointers, pivot search and "
        "row swaps for every matrix), the pivots' sign and the diagonal's product in further kernels; fix: "
        "(A[:, 0] * torch.linalg.cross(A[:, 1], A[:, 2], dim=-1)).sum(-1), 17 FLOPs a matrix in three "
        "elementwise kernels; the same determinants to fp32 rounding (the needed result by a costlier method, "
        "a general factorisation where a closed form serves: cause move_work; resource None)",
    ),
]

HELDOUT41_PAIRS = [
    Pair(
        "the Kuramoto model's coupling summed over all N^2 pairs of oscillators (a sine of every phase "
        "difference) where the mean-field identity (two sums over the oscillators) serves",
        "calib_kuramoto_pairs",
        "v0",
        "v1",
        "move_work",
        planted="out [16384] fp32 = omega_i + (K / N) sum_j sin(theta_j - theta_i) for 16384 oscillators "
        "(concentrated phases, order parameter ~0.67): v0 a program a block of 32 oscillators walks all phases "
        "in blocks of 128, a [32, 128] tile of tl.sin(theta_j - theta_i) (libdevice's sinf: ~25 instructions a "
        "pair, the range reduction, a float-to-int conversion, the polynomial, the large-argument test) added "
        "into an accumulator tile, reduced once: 2.7e8 sines; fix: S = sum_j sin(theta_j), C = sum_j "
        "cos(theta_j) summed by each of 16 programs of 1024 oscillators, out = omega + (K / N) (S cos(theta_i) "
        "- C sin(theta_i)): 2N sines and cosines a program; the same values to fp32 rounding (the needed "
        "coupling by a costlier method, N^2 sines where 2N serve, the sine's instruction stream issue-bound: "
        "resource issue)",
        resource="issue",
    ),
    Pair(
        "the Triton tutorial's whole-row fused softmax (BLOCK = next_power_of_2(V), 16 warps) applied to "
        "131072-wide rows, the row's values spilled to local memory, where an online softmax over 4096-wide "
        "chunks serves",
        "calib_softmax_wholerow",
        "v0",
        "v1",
        "spills",
        planted="softmax along each row of x [256, 131072] fp32: v0 a program a row loads the whole row as one "
        "[131072] tile with 16 warps (256 values a thread, and as many exponentials), its max, exponentials "
        "and sum taken in one block: far beyond the registers, the compiler keeps the tile in local memory (a "
        "~2 KB stack a thread, 1 MB a program), stored and reloaded at each pass over the row through L1, L2 "
        "and DRAM; fix: a program a row with 8 warps, an online pass over 32 chunks of 4096 (running max and "
        "rescaled sum) and a normalising pass: 16 values a thread, no spills, the row read twice; the same "
        "values to fp32 rounding (local-memory spill traffic: cause spills; resource None)",
    ),
    Pair(
        "the scores of each user's candidate items computed by scoring the whole item catalogue ((U @ E.T)"
        ".gather(1, cand): a [B, NI] product, K of its NI columns kept) where the candidates' embeddings "
        "gathered and one batched dot product serve",
        "candidate_scores_full_catalogue.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        models={"step": {"flops": 6.7e7, "bytes": 7.0e7, "dtype": "bfloat16", "tensor_cores": False}},
        planted="the [1024, 32] scores of 32 candidate items for each of 1024 users a step (bf16 embeddings, "
        "D = 1024, a catalogue of 131072 items, 256 MiB): U @ E.T, a [1024, 131072] bf16 matrix product "
        "(2.7e11 FLOPs on the tensor cores, its 256 MiB output written), then .gather(1, cand); fix: "
        "torch.einsum('bd,bkd->bk', U, E[cand]): the candidates' rows gathered (64 MiB) and 1024 x 32 dot "
        "products of length 1024 (6.7e7 FLOPs); the same scores to bf16 rounding (the needed scores by a "
        "costlier method, the product with every item of the catalogue: cause move_work; resource tensor)",
        resource="tensor",
    ),
    Pair(
        "AdamW run with its default multi-tensor (foreach) implementation (a chain of ~10 foreach kernels a "
        "step, each a pass over the parameters, gradients or moments) where fused=True (one pass) serves",
        "adamw_foreach_chain.py",
        "bad",
        "good",
        "fusion",
        mode="nsys",
        command=True,
        models={"step": {"flops": 5.4e8, "bytes": 9.4e8, "dtype": "float32", "tensor_cores": False}},
        planted="one AdamW step (lr 1e-3, weight decay 0.01) over 8 fp32 parameters of [2048, 2048] (33.5 M "
        "elements), gradients fixed: torch.optim.AdamW(foreach=True), the default on CUDA: _foreach_mul_ "
        "(decay), _foreach_lerp_, _foreach_mul_ and _foreach_addcmul_ (moments), _foreach_sqrt, _foreach_div_, "
        "_foreach_add_ and _foreach_addcdiv_ (update): ~20 passes of 134 MB through DRAM a step; fix: "
        "AdamW(fused=True), one kernel a chunk reading each element's parameter, gradient and moments once and "
        "writing the parameter and moments once (7 passes); the same update to fp32 rounding (a chain of "
        "kernels whose intermediates go through DRAM where one kernel keeps them in registers: cause fusion, "
        "resource dram)",
        resource="dram",
    ),
]
