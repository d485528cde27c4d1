"""Calibration pair — small tiles, low operand reuse: C = A @ B in fp16 (bfloat16 allowed), fp32
accumulation, A [M, K] and B [K, N] row-major, M = N = K = 4096 by default.

Planted problem (v0): one tiled Triton GEMM kernel (plain ``tl.dot``, grouped launch order
GROUP_M = 8, no autotuning) launched with BLOCK 32x32x32, num_warps=2, num_stages=1. Each
k-step of a program loads (32 + 32)·32·2 B = 4 KB of operands for 2·32·32·32 = 65.5 kFLOP:
16 FLOP per operand byte. With two warps Triton emits mma.sync (m16n8k16) instead of wgmma, and
with one stage every program waits for each k-step's loads before its MMAs.
Fix (v1): the same kernel and launch order with BLOCK 128x128x64, num_warps=8, num_stages=3:
(128 + 128)·64·2 B = 32 KB per 2.1 MFLOP, 64 FLOP/B (4x the reuse), wgmma, loads pipelined
three deep.

Operand traffic into the SMs = FLOPs / (FLOP/B): v0 137.4 GFLOP / 16 = 8.6 GB, v1 2.15 GB (measured
l1tex__t_bytes.sum 8.60 GB vs 2.18 GB; L2 -> L1 7.58 GB vs 2.15 GB).

Model: 2·M·N·K FLOPs (tensor cores); (M·K + K·N + M·N)·2 bytes (each operand read once, C
written once): 137.4 GFLOP and 101 MB at the defaults, 1365 FLOP/B (right of the H100 ridge).

Counters Nsight Compute should show for v0 (measured at the defaults): L1/TEX throughput 96.8 %,
L2 63.6 %, tensor pipe 15.5 % (33.5 M HMMA instructions, no GMMA), SM throughput 20.6 %, DRAM 8.5 %;
stalls long_scoreboard 39 % and short_scoreboard 35 % (+ mio_throttle 12 %) of the warps' cycles;
72 registers, 64-thread programs, occupancy 43 % (14 programs per SM), 8.9 waves, no spills, few
bank conflicts (1.9 M of 174 M shared wavefronts). DRAM reads 361 MB, 3.6x the model (L2 hit
91 %), but at 8.5 % of peak that is not the limit. v1: tensor pipe 65 %, 2.1 M GMMA, L1 54 %,
L2 79 %, 502 TFLOP/s.

Expected speed-up on an H100: the floor is 137.4 GFLOP / 989 TFLOP/s = 139 µs; v1 ~275 µs
(500 TFLOP/s; cuBLAS fp16 at 4096^3: 198 µs); v0 ~1.35 ms, bound by moving 8.6 GB of operands
through L1 at ~97 % of its throughput → ~4.9x. At 8192^3 the pair measured v0 10.7 ms, v1
2.26 ms (4.7x): past the 5 ms window, hence 4096.

Measured (H100 SXM, torch 2.11, Triton 3.6, triton.testing.do_bench median, two rounds,
2026-11-24): v0 1348-1356 µs (102 TFLOP/s), v1 274 µs (502 TFLOP/s) → 4.9x.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    dtype = getattr(torch, params["dtype"])
    M, N, K = params["M"], params["N"], params["K"]
    a = torch.randn(M, K, generator=g, device=device, dtype=torch.float32).to(dtype)
    b = torch.randn(K, N, generator=g, device=device, dtype=torch.float32).to(dtype)
    # Poisoned output: NaN wherever the kernel fails to write shows up in the check.
    c = torch.full((M, N), float("nan"), device=device, dtype=dtype)
    return {"a": a, "b": b, "c": c}


def _reference(inputs, params):
    # fp32 accumulation of the exact products of the fp16/bf16 inputs, rounded to the output dtype.
    return (inputs["a"].double() @ inputs["b"].double()).to(inputs["a"].dtype)


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel(
    "gemm",
    flops=lambda p: 2.0 * p["M"] * p["N"] * p["K"],
    bytes=lambda p: 2.0 * (p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]),
    tensor_cores=True,
)

KERNEL = KernelPackage(
    name="calib_small_tiles",
    description="Calibration (small tiles, low reuse): fp16 GEMM; v0 uses 32x32x32 tiles with 2 warps and no "
                "pipelining, v1 the same kernel with 128x128x64 tiles, 8 warps, 3 stages.",
    params=(
        Param("M", 4096, min=1, max=1 << 15, doc="rows of A and C"),
        Param("N", 4096, min=1, max=1 << 15, doc="columns of B and C"),
        Param("K", 4096, min=1, max=1 << 15, doc="inner dimension"),
        DTYPE_PARAM("float16", choices=("float16", "bfloat16")),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: 32x32x32 tiles, num_warps=2, num_stages=1: 4x the operand bytes per FLOP of v1, "
                      "the tensor pipe waits on loads", (_STAGE,), _build("v0")),
        Version("v1", "fix: the same kernel with 128x128x64 tiles, num_warps=8, num_stages=3",
                (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: 2.0 * (p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]),
)
