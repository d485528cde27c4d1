"""Calibration pair (thirty-second held-back set) — the backward pass of a row softmax (dx = J^T g for
s = softmax(x), J = diag(s) - s s^T a row) computed by forming each row's N x N outer-product part s s^T of the
Jacobian tile by tile and multiplying it by the upstream gradient g (the textbook derivation turned into code:
"build the Jacobian, then multiply"), where the vector-Jacobian identity dx = s * (g - <s, g>) gives the same
result with one dot product a row. Sources: E. Bendersky, "The Softmax function and its derivative" (2016: the
Jacobian derived, and the note that the full Jacobian need not be formed); the PyTorch source
(aten/src/ATen/native/SoftMax.cpp, softmax_backward_data: grad_input = output * (grad - sum(grad * output))); the
CUDA C++ Programming Guide (arithmetic-instruction throughput: FP32 multiply and FMA); the CUDA C++ Best Practices
Guide ("Arithmetic Instructions": prefer cheaper formulations).

The work: dx [M, N] fp32 from s [M, N] (a softmax, rows summing to 1) and g [M, N] fp32, the same in both versions.

Planted problem (v0): stage "softmax_bwd_jacobian": one program a row; for every tile of 128 outputs i and every
128-column chunk j, the tile -(s_i s_j) g_j accumulated (an FP32 multiply and an FMA for every (i, j) pair: ~2 N^2
FP32 operations a row), the tile summed over j at the end, the diagonal part s_i g_i added apart.
Fix (v1): stage "softmax_bwd_vjp": one program a row, <s, g> reduced once, dx = s * (g - <s, g>): memory-bound.

Model (the needed work, for both): FLOPs 4 M N (the dot product, the subtract and the multiply); bytes s and g
read, dx written: 12 M N.

Expected on an H100/H200 (per design): M = 8192, N = 1024: v1 ~30-45 us (100 MB at ~2.5-3.5 TB/s); v0 8.6e9
pairs x 2 FP32 operations on the FMA pipes (128 lanes an SM a clock, ~33 T lane-operations/s): >= 0.5 ms, ~0.6-0.9
ms: ~15-25x. Cause "move_work" (the needed gradient by a costlier method: an N x N product a row where one dot
product serves); resource "fma" (the FP32 multiplies and FMAs of the outer-product tiles).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    m, n = p["M"], p["N"]
    logits = torch.randn(m, n, generator=g) * 2.0
    s = torch.softmax(logits.double(), dim=1).float()
    grad = torch.randn(m, n, generator=g)
    return {
        "S": s.to(device),
        "G": grad.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((m, n), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    s, g = inputs["S"].double(), inputs["G"].double()
    return (s * (g - (s * g).sum(dim=1, keepdim=True))).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 4.0 * p["M"] * p["N"]


def _bytes(p):
    return 12.0 * p["M"] * p["N"]


KERNEL = KernelPackage(
    name="calib_softmax_jacobian",
    description="Calibration (held back, set 32; planted: a softmax backward through each row's N x N "
    "outer-product Jacobian where the vector-Jacobian identity serves): dx of [8192, 1024] fp32; v0 the "
    "Jacobian tiles times g, v1 s * (g - <s, g>)",
    params=(
        Param("M", 8192, min=1, max=1 << 20, doc="rows"),
        Param("N", 1024, min=128, max=1024, doc="columns (a multiple of 128, a power of two)"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: each row's outer product s s^T formed tile by tile and multiplied by g",
            (StageModel("softmax_bwd_jacobian", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: dx = s * (g - <s, g>), one dot product a row",
            (StageModel("softmax_bwd_vjp", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
