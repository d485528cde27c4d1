"""Calibration pair (fourth held-back set) — L2 thrashing from the launch order of a large GEMM's
output tiles: with row-major order the ~132 programs resident together compute one row of tiles,
so they share one row block of A but each reads its own column block of B; B (K·N·2 = 268 MB) is
far larger than the 50 MB L2, so it is streamed from DRAM again for every row block of C (Nsight
Compute's memory workload analysis: L2 hit rate low, DRAM bytes far above the operands' size;
Triton's matmul tutorial and CUTLASS's threadblock swizzle: launch tiles in groups so that
concurrently running programs reuse each other's operand blocks in L2).

The work: C = A @ B with A [M, K], B [K, N] and C bf16 (fp16 allowed for the CPU interpreter), an LM
head's shape: M = 4096 tokens, N = 32768 (vocabulary), K = 4096 (model width), fp32 accumulation,
tl.dot (128x256x64 tiles, 8 warps, 3 stages).

Planted problem (v0): GROUP_M=1, program p computes tile (p // 128, p % 128): per row block of C
(32 of them), all of B is read from DRAM: ~32 x 268 MB = 8.6 GB, i.e. ~128 FLOP per DRAM byte,
under the H100's ridge (~300 FLOP/B).
Fix (v1): GROUP_M=8: the resident programs cover 8 row blocks x ~16 column blocks, each B block
read once per 8 row blocks from DRAM (its other reads L2 hits): DRAM bytes ~8x fewer.

Model: FLOPs 2·M·N·K (1.1 TFLOP at the defaults, tensor cores); bytes A and B read once, C written
once: (M·K + K·N + M·N)·2 = 570 MB (~1930 FLOP/B: compute-bound by the model).

Expected on an H100 SXM (per design): v1 ~550-650 TFLOP/s → ~1.7-2 ms; v0 bound by DRAM at
~8.6 GB / ~3 TB/s ≈ 2.9 ms: ≈ 1.5-1.7x. v0's limiter is DRAM (resource "dram"), its bytes far above
the model the same operand blocks re-read (cause "over_fetch").
Tolerance: bf16 output (the default 1e-2).
Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 2930 µs,
v1 1718 µs (1.71x); recorded event medians v0 2952 µs, v1 1883 µs (+57 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    m, n, k = p["M"], p["N"], p["K"]
    a = torch.randn(m, k, generator=g, device=device, dtype=torch.float32).to(dt)
    b = (torch.randn(k, n, generator=g, device=device, dtype=torch.float32) / k**0.5).to(dt)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"a": a, "b": b, "c": torch.full((m, n), float("nan"), device=device, dtype=dt)}


def _reference(inputs, p):
    return (inputs["a"].double() @ inputs["b"].double()).to(inputs["a"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    m, n, k = p["M"], p["N"], p["K"]
    return float((m * k + k * n + m * n) * p.itemsize)


_STAGE = StageModel("matmul", flops=lambda p: 2.0 * p["M"] * p["N"] * p["K"], bytes=_bytes, tensor_cores=True)

KERNEL = KernelPackage(
    name="calib_tile_order",
    description="Calibration (held back, set 4; planted: row-major launch order of a large GEMM's tiles, B re-streamed from DRAM per row block): C = A @ B, bf16 M=4096, N=32768, K=4096; v0 GROUP_M=1, v1 GROUP_M=8",
    params=(
        Param("M", 4096, min=1, max=1 << 16, doc="rows of A and C"),
        Param("N", 32768, min=1, max=1 << 16, doc="columns of B and C"),
        Param("K", 4096, min=1, max=1 << 16, doc="columns of A, rows of B"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: row-major tile order (GROUP_M=1; 128x256x64, 8 warps, 3 stages)",
            (_STAGE,),
            _build("v0"),
        ),
        Version("v1", "fix: the same kernel with grouped tile order (GROUP_M=8)", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
)
