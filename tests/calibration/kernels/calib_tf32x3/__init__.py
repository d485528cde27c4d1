"""Calibration pair (sixth held-back set) — an fp32 GEMM whose tl.dot asks for error-compensated 3xTF32
(input_precision="tf32x3") where plain TF32 suffices: every product is done three times on the tensor
cores, plus the operand splitting (Nsight Compute's pipe-utilisation rule: the tensor pipe busy with work
the result does not need; CUDA C++ Best Practices Guide, "Instruction optimization": use the fastest
arithmetic that meets the accuracy required; the precision-related options).

The work: a float32 linear layer, C = A @ W^T, A [M, K], W [N, K] (nn.Linear's layout: both operands
K-major, as TF32 wgmma reads them from shared memory), C [M, N], all float32 (a projection whose consumer is
bf16 or a loss: TF32's 10-bit mantissa products with fp32 accumulation are accurate enough), M = N = K =
4096; 128x128x32 tiles in grouped order (GROUP_M = 8), 8 warps, 3 stages.

Planted problem (v0): tl.dot(a, b, acc, input_precision="tf32x3"): Triton splits each fp32 operand into a
TF32 "big" part and a TF32 remainder and issues three TF32 MMAs per product (big·big + big·small +
small·big), with the remainders' conversions on the ALU/FMA pipes and an extra operand in shared memory:
~3x the tensor-pipe work of the result's need, ~1e-6 relative error where ~1e-3 is accepted.
Fix (v1): input_precision="tf32" (Triton's default for fp32 dots): one TF32 MMA per product; nothing
else changes (tiles, warps, stages, order).

Model: A and W read once, C written once (bytes 4·(M·K + K·N + M·N) = 201 MB at the defaults), 2·M·N·K
FLOPs on the tensor cores (float32 operands: the TF32 rate).

Expected on an H100 SXM (per design): v1 ~137 GFLOP at ~350-450 TFLOP/s (TF32 dense peak ~495) → ~0.3-0.4
ms; v0 three MMAs per product plus the splitting → ~1.0-1.3 ms: ≈ 2.5-3.5x. v0's limiter is the tensor
pipe (resource "tensor"), the work the fix removes from it (cause "move_work").
Quick check before recording (H100, do_bench): first written with B [K, N] (N-major), both versions ran
far from the tensor peak (v0 3.8 ms, v1 1.66 ms at 83 TFLOP/s: TF32 wgmma reads B K-major only, so B was
transposed on the way); with W [N, K] v0 1862 µs (74 TFLOP/s of the model, ~220 of TF32 MMAs), v1 518 µs
(265 TFLOP/s): 3.6x.
Tolerance: TF32 products with fp32 accumulation over K = 4096: 5e-3 relative (v0 lands far below).
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): recorded event medians v0 2539 µs (54 TFLOP/s of the model,
~160 of TF32 MMAs), v1 645 µs (213 TFLOP/s): +294 %.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    m, n, k = p["M"], p["N"], p["K"]
    a = torch.randn(m, k, generator=g, device=device, dtype=torch.float32)
    w = torch.randn(n, k, generator=g, device=device, dtype=torch.float32) / k**0.5  # nn.Linear's [N, K]
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"a": a, "w": w, "c": torch.full((m, n), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    return (inputs["a"].double() @ inputs["w"].double().T).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    m, n, k = p["M"], p["N"], p["K"]
    return float(4 * (m * k + k * n + m * n))


_STAGE = StageModel("gemm", flops=lambda p: 2.0 * p["M"] * p["N"] * p["K"], bytes=_bytes, tensor_cores=True)

KERNEL = KernelPackage(
    name="calib_tf32x3",
    description="Calibration (held back, set 6; planted: an fp32 tl.dot with input_precision='tf32x3' where "
    "TF32 suffices): C = A @ W^T, float32; v0 3xTF32 (three MMAs per product), v1 TF32",
    params=(
        Param("M", 4096, min=1, max=1 << 16),
        Param("N", 4096, min=1, max=1 << 16),
        Param("K", 4096, min=1, max=1 << 16),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: tl.dot with input_precision='tf32x3' (three TF32 MMAs per product)",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: tl.dot with input_precision='tf32' (one TF32 MMA per product)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 5e-3,
)
