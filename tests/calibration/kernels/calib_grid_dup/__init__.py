"""Calibration pair (twenty-second held-back set) — a matrix product launched with a grid axis left over from
its split-K version: the grid is (tiles, SPLIT = 4) but the K loop was made whole again, so every program of
the second axis computes the full product of its tile and stores the same values — each tile computed 4 times.
Nothing fails (the four stores write the same numbers); the fix launches the grid (tiles, 1). Sources: the
Triton tutorial "Matrix Multiplication" (one program a [BLOCK_M, BLOCK_N] tile, the grid its count), the CUTLASS
documentation of split-K / stream-K (a K-split axis of the grid whose programs must each take their part of K),
and the CUDA C++ Best Practices Guide ("Execution Configuration": the grid is the work launched).

The work: C [M, N] fp32 = A [M, K] fp16 · B [K, N] fp16 (M = N = K = 4096), fp32 accumulation on the tensor
cores, tiles [128, 128], BLOCK_K 64, 8 warps.

Planted problem (v0): stage "matmul_dup4": 4096 programs for 1024 tiles, each a full K loop (4x the MMAs, the
loads and the stores of the result).
Fix (v1): stage "matmul": 1024 programs.

Model (both): FLOPs 2·M·N·K (the needed work), bytes A, B read once and C written once.

Expected on an H100 SXM (per design): v1 ~0.25-0.35 ms (137 GFLOP at ~400-550 TFLOP/s), v0 4x the tensor work,
~1.0-1.4 ms: ~3.5-4x. Cause "move_work" (the needed product done by a costlier method: four times over, on the
tensor cores where once gives the same result), resource "tensor".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    m, n, k = p["M"], p["N"], p["K"]
    g = torch.Generator(device="cpu").manual_seed(0)
    a = (torch.randn(m, k, generator=g) / k**0.5).to(torch.float16)
    b = torch.randn(k, n, generator=g).to(torch.float16)
    return {
        "A": a.to(device),
        "B": b.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((m, n), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    return (inputs["A"].double() @ inputs["B"].double()).to(torch.float32)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * p["M"] * p["N"] * p["K"]


def _bytes(p):
    return 2.0 * p["M"] * p["K"] + 2.0 * p["K"] * p["N"] + 4.0 * p["M"] * p["N"]


KERNEL = KernelPackage(
    name="calib_grid_dup",
    description="Calibration (held back, set 22; planted: a matrix product launched with a leftover split-K "
    "grid axis, every tile computed by 4 programs): C = A [4096, 4096] fp16 · B [4096, 4096] fp16; v0 grid "
    "(tiles, 4), v1 grid (tiles, 1)",
    params=(
        Param("M", 4096, min=1, max=1 << 16, doc="rows of A and C"),
        Param("N", 4096, min=1, max=1 << 16, doc="columns of B and C"),
        Param("K", 4096, min=1, max=1 << 16, doc="the reduction"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: grid (tiles, 4), each program the whole K loop of its tile",
            (StageModel("matmul_dup4", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: grid (tiles, 1)",
            (StageModel("matmul", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-2,
)
