"""Calibration pair (fourth held-back set) — a bf16 GEMM whose operands are upcast to float32 before
the dot "for accuracy": tl.dot on float32 operands runs TF32 MMAs (Triton's default input_precision),
which the H100's tensor cores execute at half the bf16 rate, with the tiles converted and re-stored
in shared memory as 4-byte values every K step (Nsight Compute's pipe utilisation: the tensor pipe
busy with an instruction mix twice as long as the work needs; CUDA C++ Best Practices Guide: use
the fastest arithmetic that meets the accuracy — the products of bf16 values are exact in TF32 and
in bf16 MMAs alike, both accumulate in fp32).

The work: C = A @ B with A [M, K], B [K, N] and C bf16 (fp16 allowed for the CPU interpreter),
M = N = K = 4096, fp32 accumulation; one tiled kernel (128x128x64, 8 warps, 3 stages, grouped
launch order).

Planted problem (v0): ``a = a.to(tl.float32); b = b.to(tl.float32)`` after the loads, so the dot is
a TF32 dot (PTX read with Triton 3.9 for sm_90 without a GPU: wgmma m64n128k8 .tf32, twice as many
wgmma instructions per K step as v1's m64n128k16 .bf16, plus cvt.f32.bf16 of every loaded element).
Fix (v1): the bf16 tiles fed to tl.dot as loaded (fp32 accumulation all the same).

Model: FLOPs 2·M·N·K (137 GFLOP at the defaults, tensor cores, bf16 peak); bytes A and B read once,
C written once: 3·4096²·2 = 101 MB (~1360 FLOP/B: compute-bound).

Expected on an H100 SXM (per design): v1 ~550-650 TFLOP/s → ~210-250 µs; v0 at most half the bf16
MMA rate plus the conversions → ~450-550 µs: ≈ 2x. v0's limiter by design the tensor pipe; the fix
removes half of its work and the conversions (move_work).
Tolerance: bf16 output (the default 1e-2; the two versions' products are the same exact values).
Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 1774 µs,
v1 257 µs (6.9x, far more than the design's 2x: v0 runs at 77 TFLOP/s, 16 % of the TF32 peak, so the TF32
rate is not its limit; 205 registers per thread against v1's 122 and every loaded element converted and
re-staged in shared memory as fp32 — the design names no single busy pipe any more: resource set to None
after this check, before recording); recorded event medians v0 2496 µs, v1 305 µs (+718 %).
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
    name="calib_upcast_dot",
    description="Calibration (held back, set 4; planted: bf16 operands upcast to fp32 before tl.dot, so the MMAs run as TF32 at half the bf16 rate): C = A @ B, bf16 4096^3; v0 a.to(float32), b.to(float32) before the dot, v1 the bf16 tiles fed to the dot",
    params=(
        Param("M", 4096, min=1, max=1 << 16, doc="rows of A and C"),
        Param("N", 4096, min=1, max=1 << 16, doc="columns of B and C"),
        Param("K", 4096, min=1, max=1 << 16, doc="columns of A, rows of B"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the loaded bf16 tiles converted to float32 before tl.dot (TF32 MMAs; 128x128x64, 8 warps, 3 stages)",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the same kernel with the bf16 tiles fed to tl.dot as loaded (bf16 MMAs, fp32 accumulation)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
)
