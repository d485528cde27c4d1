"""Calibration pair (fifteenth held-back set) — a symmetric product computed in full where one triangle
serves: the Gram matrix C = X·Xᵀ (a covariance or kernel matrix, the Gauss–Newton / Shampoo
preconditioner's statistics, a similarity matrix of embeddings) computed by a general GEMM, every tile
of C, although C is symmetric: the tiles below the diagonal repeat the ones above it. BLAS has SYRK
for this (cuBLAS cublasSyrk / cublasSyrkEx, "only the lower or upper triangle is computed"); the
general GEMM does every dot product twice. Sources: the BLAS level-3 reference (xSYRK, Dongarra et
al., "A set of level 3 basic linear algebra subprograms", ACM TOMS 16(1), 1990); the cuBLAS
documentation of cublas<t>syrk; torch.Tensor.mm's users computing x @ x.T (no SYRK in PyTorch).

The work: X [N, K] (N = 8192, K = 2048, bf16; fp16 allowed for the CPU interpreter), C [N, N] in the
input dtype, fp32 accumulation. One kernel in both versions: a tiled tl.dot GEMM (128x128x64, 8 warps,
3 stages), one program per output tile, the tiles taken from a table (int32 pairs of tile row and
column) in grouped order (GROUP_M = 8 tile rows).

Planted problem (v0): the table lists every tile of C: (N/128)² = 4096 programs, 2·N²·K = 275 GFLOP of
MMAs for the N(N+1)·K ≈ 137.5 GFLOP that the result needs.
Fix (v1): the table lists the tiles on and above the diagonal (i ≤ j): 64·65/2 = 2080 programs; each
off-diagonal tile is stored twice, at (i, j) and transposed (tl.trans) at (j, i). The same values: C
is symmetric and each tile's dot products are the same sums.

Model: FLOPs N(N+1)·K (one triangle, diagonal included, a multiply and an add each, tensor cores);
bytes (N·K + N²)·itemsize (X read once, C written once): 137.5 GFLOP and 168 MB at the defaults
(~820 FLOP/B: compute-bound).

Expected on an H100 SXM (per design): v0 ~275 GFLOP at ~500-600 TFLOP/s → ~0.5 ms with the tensor
pipe the limiter (resource "tensor"); v1 ~143 GFLOP of MMAs (the diagonal tiles in full) → ~0.27 ms:
~1.9x (4096 programs are 31 waves of 132, 2080 are 15.8). The fix removes work from the limiting
pipe (cause "move_work": the same result by a cheaper algorithm).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    dt = getattr(torch, p["dtype"])
    n, k = p["N"], p["K"]
    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(n, k, generator=g, device=device, dtype=torch.float32) / k**0.25
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x.to(dt), "c": torch.full((n, n), float("nan"), device=device, dtype=dt)}


def _reference(inputs, p):
    x = inputs["x"].double()
    return (x @ x.T).to(inputs["x"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    n, k = p["N"], p["K"]
    return float(n * k + n * n) * p.itemsize


_STAGE = StageModel(
    "gram", flops=lambda p: float(p["N"]) * (p["N"] + 1) * p["K"], bytes=_bytes, tensor_cores=True
)

KERNEL = KernelPackage(
    name="calib_syrk",
    description="Calibration (held back, set 15; planted: a symmetric product computed in full where one "
    "triangle serves): C = X·Xᵀ for X [8192, 2048] bf16; v0 a GEMM over every tile of C, v1 the tiles on and "
    "above the diagonal, each off-diagonal tile stored twice (the second transposed)",
    params=(
        Param("N", 8192, min=1, max=1 << 15, doc="rows of X (C is N x N)"),
        Param("K", 2048, min=1, max=1 << 15, doc="columns of X (the dot products' length)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: a general tiled GEMM (128x128x64, 8 warps, 3 stages) over every tile of the symmetric C",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the same kernel over the tiles on and above the diagonal, each off-diagonal tile also "
            "stored transposed below it",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
)
