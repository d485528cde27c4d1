"""Calibration pair (third held-back set) — a skinny GEMM with a long reduction and no split-K: the
weight gradient of a small linear layer, dW = Xᵀ @ dY, M = N = 256 and K = T = 65536 tokens, run as
an ordinary output-tiled GEMM: 4 output tiles, so 4 programs, each looping over all 65536 tokens
(Nsight Compute's launch statistics: "the grid is too small to fill the available resources";
CUTLASS/cuBLAS split-K and stream-K: parallelise the K dimension when M·N has few tiles).

The work: X [T, M] and dY [T, N] (bf16; fp16 allowed for the CPU interpreter; X read transposed,
M-contiguous), dW [M, N] in fp32 (the gradient accumulator's type), fp32 accumulation on the tensor
cores (tl.dot; 128x128x64 tiles, 8 warps, 3 stages).

Planted problem (v0): SPLIT_K = 1: (256/128)² = 4 programs for 132 SMs; each streams 2·128·65536·2 B
= 33.5 MB through one SM and does 2.1 GFLOP there, while 128 SMs idle.
Fix (v1): SPLIT_K = 32: 128 programs, each over 2048 tokens, their partial tiles added with relaxed
fp32 atomics into dW (zeroed first in the stage; 32 atomic adds per element of dW).

Model: FLOPs 2·M·N·K (8.6 GFLOP at the defaults, tensor cores); bytes X and dY read once, dW written
once: (M + N)·K·itemsize + 4·M·N = 67.4 MB.

Expected on an H100 SXM (per design): v1 reads 67 MB with all SMs (~25-40 µs); v0 runs at the rate of
4 SMs: at best 4/132 of the tensor peak (~30 TFLOP/s → ~290 µs), in practice bound by what one SM can
stream (~33.5 MB per SM at ~100-200 GB/s): ~250-300 µs: ≈ 8x. No pipe or memory level is busy device-
wide in v0 (resource: none; cause: few_blocks).
Tolerance: fp32 sums of 65536 products, on the tensor cores (their fp32 accumulation is not IEEE-exact)
and in another order: 1e-4 relative.
Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 615 µs,
v1 44 µs (14x, more than the design's 8x); recorded event medians v0 845 µs, v1 44 µs (+1816 %). v0's
relative error 7.6e-5 (one fp32 accumulator over 65536 tokens), v1's 2.1e-6.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    t, m, n = p["T"], p["M"], p["N"]
    x = torch.randn(t, m, generator=g, device=device, dtype=torch.float32).to(dt)
    dy = torch.randn(t, n, generator=g, device=device, dtype=torch.float32).to(dt)
    # Poisoned output: NaN wherever a version fails to write (v1 zeroes it in the stage).
    return {"x": x, "dy": dy, "dw": torch.full((m, n), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    return (inputs["x"].double().T @ inputs["dy"].double()).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float((p["M"] + p["N"]) * p["T"] * p.itemsize + 4 * p["M"] * p["N"])


_STAGE = StageModel("dw", flops=lambda p: 2.0 * p["M"] * p["N"] * p["T"], bytes=_bytes, tensor_cores=True)

KERNEL = KernelPackage(
    name="calib_split_k",
    description="Calibration (held back, set 3; planted: a skinny GEMM with a long K and no split-K): the weight "
    "gradient dW = X^T @ dY (M = N = 256, K = 65536 tokens, bf16, fp32 dW); v0 4 output-tile programs, v1 split-K "
    "32 with relaxed atomics",
    params=(
        Param("T", 65536, min=1, max=1 << 22, doc="tokens (the reduction dimension K)"),
        Param("M", 256, min=1, max=1 << 14, doc="input features (rows of dW)"),
        Param("N", 256, min=1, max=1 << 14, doc="output features (columns of dW)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: one program per 128x128 output tile (4 programs), each over all T tokens",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: split-K 32 (128 programs of T/32 tokens), partial tiles added with relaxed atomics",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
