"""Calibration pair (second held-back set) — half the tensor-core work spent on tiles that are all
zeros: a dense GEMM over a causal (lower-triangular) matrix (FlashAttention's causal block
skipping; CUDA C++ Best Practices Guide: do not compute what is known to be zero).

The work: Y = P @ V with P [N, N] a causal matrix (row i has weights on columns 0..i and exact
zeros above the diagonal, stored dense: the probabilities of causal attention, a decay or a
cumulative-mixing matrix) and V [N, D] (N = 8192, D = 1024, bf16; fp16 allowed for the CPU
interpreter), fp32 accumulation, Y in the input dtype.

Planted problem (v0): a plain tiled GEMM (tl.dot, BLOCK 128x128x64, 8 warps, 3 stages, grouped
launch order with the heaviest row blocks first): every program runs its K loop over all N
columns of P, so the tiles above the diagonal — half of P — are loaded and multiplied although
they are zero: 2·N²·D = 137 GFLOP on the tensor pipe for N(N+1)·D ≈ 68.7 GFLOP of work.
Fix (v1): the same kernel and launch order with the K loop stopped at the diagonal (row block m
reads P's columns 0 .. (m+1)·BLOCK_M - 1 only): (N/BLOCK_M + 1)/(2·N/BLOCK_M) = 65/128 ≈ 50.8 % of
the MMAs and of P's bytes. The output is the same: the skipped terms are exact zeros.

Model: FLOPs D·N·(N+1) (the non-zero entries of P, a multiply and an add each, tensor cores);
bytes (N(N+1)/2 + 2·N·D)·itemsize (P's lower triangle and V read once, Y written once): 68.7 GFLOP
and 101 MB at the defaults (~680 FLOP/B: compute-bound).

Expected on an H100 SXM (per design): v0 runs the GEMM at ~550 TFLOP/s of executed work
(137 GFLOP → ~250 µs) with the tensor pipe the limiter (resource "tensor"); v1 executes ~70 GFLOP
at a similar rate → ~135 µs: ≈ 1.8x. The fix removes work from the limiting pipe (move_work).
Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-25): quick check (do_bench median, L2 flushed) v0 244 µs,
v1 140 µs (1.74x); recorded event medians v0 304 µs, v1 173 µs (+76 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    dt = getattr(torch, p["dtype"])
    n, d = p["N"], p["D"]
    g = torch.Generator(device=device).manual_seed(0)
    w = torch.rand(n, n, generator=g, device=device, dtype=torch.float32).tril_()
    w /= w.sum(dim=1, keepdim=True)  # causal attention probabilities: rows sum to 1
    v = torch.randn(n, d, generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"p": w.to(dt), "v": v.to(dt), "y": torch.full((n, d), float("nan"), device=device, dtype=dt)}


def _reference(inputs, p):
    return (inputs["p"].double() @ inputs["v"].double()).to(inputs["v"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    n, d = p["N"], p["D"]
    return (n * (n + 1) / 2.0 + 2.0 * n * d) * p.itemsize


_STAGE = StageModel(
    "pv", flops=lambda p: float(p["D"]) * p["N"] * (p["N"] + 1), bytes=_bytes, tensor_cores=True
)

KERNEL = KernelPackage(
    name="calib_causal_gemm",
    description="Calibration (held back, set 2; planted: MMAs on the all-zero upper triangle): Y = P @ V with "
    "P [N, N] causal (lower-triangular); v0 a dense GEMM over all of P, v1 the K loop stopped at the diagonal",
    params=(
        Param("N", 8192, min=1, max=1 << 15, doc="rows and columns of P (sequence length)"),
        Param("D", 1024, min=1, max=1 << 14, doc="columns of V and Y"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: dense tiled GEMM (128x128x64, 8 warps, 3 stages): the K loop covers all N columns, "
            "half of them zero tiles above the diagonal",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the same kernel with the K loop stopped at the diagonal block",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
)
