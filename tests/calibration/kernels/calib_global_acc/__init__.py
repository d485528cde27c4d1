"""Calibration pair (fifth held-back set) — a GEMM's running sum kept in global memory: the output
tile read, added to and written back at every K step (Nsight Compute's memory workload analysis: L2
load and store traffic far above what the operands need; CUDA C++ Best Practices Guide, "Minimize data
transfer" / memory hierarchy: keep loop-carried values in registers, touch global memory once).

The work: an accumulating GEMM, D = C + A @ B (gradient accumulation, a residual added to a
projection), A [M, K] and B [K, N] bf16 (fp16 allowed for the CPU interpreter), C and D fp32,
M = N = K = 4096; 128x128x64 tiles, 8 warps, 3 stages, the bf16 products on the tensor cores, fp32
accumulation. A tile's elements are owned by one program.

Planted problem (v0): written like the textbook loop ``D[i, j] += A[i, k] * B[k, j]``: the program first
copies its C tile to D, then at every K step computes the step's partial product and does
``D_tile = load(D_tile) + partial`` in global memory (a CTA barrier after each store: the tile's load
and store may map elements to different threads). The 64 KB fp32 tile crosses L1/L2 twice per K step:
64 steps x 128 KB x 1024 tiles ≈ 8.6 GB of L2 traffic against the GEMM's 0.2 GB, each step also waiting
for its own load.
Fix (v1): the accumulator in registers: C's tile loaded once before the K loop (as tl.dot's
accumulator), D stored once after it.

Model: A and B read once, C read once, D written once (bytes 2·(M·K + K·N) + 4·2·M·N = 201 MB), 2·M·N·K
FLOPs on the tensor cores (bf16).

Expected on an H100 SXM (per design): v1 ~250-300 µs (137 GFLOP near the bf16 tensor roof); v0 ~8.6 GB
through L2 at a few TB/s plus a load latency per step → ~1.5-2.5 ms: ≈ 5-8x. v0's limiter is the L2
(resource "l2"): traffic far above the model's bytes (cause "over_fetch"; the DRAM bytes stay near the
model, the L2 absorbs the round trips).
Tolerance: fp32 sums of 4096 bf16 products: 1e-4 relative (summation order differs from the reference).
Measured (H200, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 2077 µs
(66 TFLOP/s; the K loop's loads are plain ld.global, no cp.async), v1 316 µs (434 TFLOP/s, cp.async pipeline):
6.6x; recorded event medians v0 2079 µs, v1 306 µs (+579 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    m, n, k = p["M"], p["N"], p["K"]
    a = torch.randn(m, k, generator=g, device=device, dtype=torch.float32).to(dt)
    b = (torch.randn(k, n, generator=g, device=device, dtype=torch.float32) / k**0.5).to(dt)
    c = torch.randn(m, n, generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"a": a, "b": b, "c": c, "d": torch.full((m, n), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    return (inputs["c"].double() + inputs["a"].double() @ inputs["b"].double()).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    m, n, k = p["M"], p["N"], p["K"]
    return float(p.itemsize * (m * k + k * n) + 4 * 2 * m * n)


_STAGE = StageModel(
    "gemm_acc", flops=lambda p: 2.0 * p["M"] * p["N"] * p["K"], bytes=_bytes, tensor_cores=True
)

KERNEL = KernelPackage(
    name="calib_global_acc",
    description="Calibration (held back, set 5; planted: a GEMM's accumulator read and written in global "
    "memory at every K step): D = C + A @ B, bf16 operands, fp32 C/D; v0 D tile updated in memory per K step, "
    "v1 accumulator in registers",
    params=(
        Param("M", 4096, min=1, max=1 << 16),
        Param("N", 4096, min=1, max=1 << 16),
        Param("K", 4096, min=1, max=1 << 16),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: D's tile loaded, added to and stored back in global memory at every K step",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the accumulator in registers (C loaded once before the K loop, D stored once after it)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
