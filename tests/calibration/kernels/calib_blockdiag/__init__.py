"""Calibration pair (twenty-fourth held-back set) — a grouped linear layer (G independent D x D maps on G slices of
the features: a grouped 1x1 convolution, nn.Conv1d(C, C, 1, groups=G), ResNeXt / ShuffleNet style, or
block-diagonal "multi-head" projections) computed as one dense matrix product over its block-diagonal weight,
as code that builds torch.block_diag(W_1, ..., W_G) once and calls a plain GEMM keeps it: G x G blocks multiplied,
G of them non-zero, so (G - 1) / G of the MMAs multiply zeros. The fix: a grouped product (the group as a grid
axis: each program multiplies its slice of X by its group's D x D block only); the same values (the zero blocks
add exact zeros). Sources: the PyTorch documentation of nn.Conv1d / nn.Conv2d ("groups": "each input channel
group convolved with its own set of filters"), Xie et al. "Aggregated Residual Transformations" (ResNeXt, 2017:
grouped convolutions as block-diagonal), the Triton tutorial "Matrix Multiplication" (the tiled tl.dot kernel).

The work: out [M, G*D] fp16 = X [M, G*D] fp16 times blockdiag(W_1..W_G) (W_g [D, D] fp16), fp32 accumulation.

Planted problem (v0): stage "gemm_dense": C = X · Wbd, Wbd [4096, 4096] the block-diagonal weight (G = 8, D =
512): 64 K steps a tile, 56 of them on zero blocks.
Fix (v1): stage "gemm_grouped": grid (tiles, G): program (t, g) multiplies X[:, g D:(g+1) D] by W_g: 8 K steps.

Model: v1 2 M G D^2 FLOPs (the needed work: 34.4 GFLOP at the defaults), v0 2 M (G D)^2 (275 GFLOP: the work
it does); bytes X and out once plus the weight it reads.

Expected on an H100/H200 (per design): v0 compute-bound on the tensor cores, ~275 GFLOP at ~500-600 TFLOP/s:
~0.5 ms; v1 ~34 GFLOP plus 128 MB of X and out: ~0.08-0.1 ms: ~5-6x. Cause "move_work" (the needed products done
by a costlier method: a dense product over zeros where the grouped one serves), resource "tensor".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    m, g, d = p["M"], p["G"], p["D"]
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(m, g * d, generator=gen).to(torch.float16)
    w = (torch.randn(g, d, d, generator=gen) / d**0.5).to(torch.float16)
    return {
        "X": x.to(device),
        "Wg": w.to(device),
        # The block-diagonal weight as the planted code keeps it (built once, as the model's own parameter).
        "Wbd": torch.block_diag(*w).contiguous().to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((m, g * d), float("nan"), device=device, dtype=torch.float16),
    }


def _reference(inputs, p):
    import torch

    g, d = p["G"], p["D"]
    x, w = inputs["X"], inputs["Wg"]
    outs = [(x[:, i * d : (i + 1) * d].double() @ w[i].double()) for i in range(g)]
    return torch.cat(outs, dim=1).to(torch.float16)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops_dense(p):
    return 2.0 * p["M"] * (p["G"] * p["D"]) ** 2


def _flops_grouped(p):
    return 2.0 * p["M"] * p["G"] * p["D"] ** 2


def _bytes_dense(p):
    return 4.0 * p["M"] * p["G"] * p["D"] + 2.0 * (p["G"] * p["D"]) ** 2


def _bytes_grouped(p):
    return 4.0 * p["M"] * p["G"] * p["D"] + 2.0 * p["G"] * p["D"] ** 2


KERNEL = KernelPackage(
    name="calib_blockdiag",
    description="Calibration (held back, set 24; planted: a grouped linear layer multiplied as one dense matrix "
    "over its block-diagonal weight): out = X [8192, 4096] fp16 · blockdiag(8 x [512, 512]); v0 one dense GEMM "
    "(7/8 of the MMAs on zero blocks), v1 the grouped GEMM (the group a grid axis)",
    params=(
        Param("M", 8192, min=1, max=1 << 18, doc="rows of X and out (tokens / pixels)"),
        Param("G", 8, min=1, max=64, doc="groups"),
        Param("D", 512, min=1, max=8192, doc="width of each group (in and out)"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: one dense GEMM over the block-diagonal weight",
            (StageModel("gemm_dense", flops=_flops_dense, bytes=_bytes_dense),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the grouped GEMM, each group's block only",
            (StageModel("gemm_grouped", flops=_flops_grouped, bytes=_bytes_grouped),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes_grouped,
    tolerance=lambda dtype: 1e-2,
)
