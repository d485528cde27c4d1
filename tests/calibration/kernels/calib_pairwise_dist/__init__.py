"""Calibration pair (eighteenth held-back set) — pairwise squared distances summed from differences where the
dot-product expansion serves: the squared Euclidean distance of every query to every reference point
(k-nearest neighbours, k-means assignment, an RBF kernel matrix) written as the direct formula,
d[i, j] = sum_k (x[i, k] - y[j, k])^2, one feature at a time in FP32 (a subtraction and a fused
multiply-add per pair and feature on the FMA pipes), where the expansion ||x_i||^2 + ||y_j||^2 - 2 x_i . y_j
turns the bulk of the work into a matrix product on the tensor cores. Sources: Johnson, Douze & Jégou,
"Billion-scale similarity search with GPUs" (IEEE Trans. Big Data 2019, §5: exact search computes the
distance table through this decomposition so that it is a GEMM); scikit-learn's ``euclidean_distances``
and PyTorch's ``torch.cdist`` (``compute_mode='use_mm_for_euclid_dist'``), which use the same expansion.

The work: points stored feature-major, xT [D, M] and yT [D, N] fp16 (M = N = 4096, D = 128); out [M, N]
fp32, out[i, j] = ||x_i - y_j||^2 (fp32 accumulation).

Planted problem (v0): stage "direct": one program per 128 x 128 tile of out (8 warps); a loop over the D
features, each step loading the tile's M- and N-slices of feature k (contiguous: the points are stored
feature-major) and accumulating (x_k[:, None] - y_k[None, :])^2 into the tile: 2·M·N·D FP32 operations
(a subtraction and an FMA per pair and feature).
Fix (v1): stage "expansion": the same tiling; acc = tl.dot(X tile, Y tile^T) over K blocks of 64 (fp16
operands, fp32 accumulation, tensor cores) with the rows' squared norms summed alongside (fp32), out =
max(||x||^2 + ||y||^2 - 2 acc, 0).

Model: flops 3·M·N·D (v0: a subtraction, a multiply and an add per pair and feature) / 2·M·N·D (v1, on
tensor cores); bytes: xT and yT once, out written once.

Expected on an H100 SXM (per design): v0 4.3 G FP32 lane operations ~0.15-0.25 ms (FMA pipes); v1 the
4.3 GFLOP GEMM ~10 µs and the 64 MB output ~25 µs: ~30-40 µs: ~5-7x. Cause "move_work" (the same
distances by a costlier method: FP32 FMA work where a tensor-core product gives the same result), resource
"fma".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    dt = getattr(torch, p["dtype"])
    m, n, d = p["M"], p["N"], p["D"]
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(d, m, generator=g)
    y = torch.randn(d, n, generator=g) + 0.25
    return {
        "xT": x.to(device=device, dtype=dt),
        "yT": y.to(device=device, dtype=dt),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((m, n), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    x, y = inputs["xT"].double().t(), inputs["yT"].double().t()
    d2 = (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2.0 * (x @ y.t())  # exact enough in fp64
    return d2.clamp_min(0.0).to(inputs["out"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(p["D"]) * (p["M"] + p["N"]) * p.itemsize + 4.0 * p["M"] * p["N"]


_DIRECT = StageModel("direct", flops=lambda p: 3.0 * p["M"] * p["N"] * p["D"], bytes=_bytes)
_EXPANSION = StageModel(
    "expansion", flops=lambda p: 2.0 * p["M"] * p["N"] * p["D"], bytes=_bytes, tensor_cores=True
)

KERNEL = KernelPackage(
    name="calib_pairwise_dist",
    description="Calibration (held back, set 18; planted: pairwise squared distances summed from differences "
    "where the dot-product expansion serves): 4096 x 4096 squared distances of 128-feature fp16 points; v0 "
    "(x - y)^2 summed a feature at a time on the FMA pipes; v1 ||x||^2 + ||y||^2 - 2 x.y with tl.dot",
    params=(
        Param("M", 4096, min=1, max=1 << 20, doc="query points (rows of out)"),
        Param("N", 4096, min=1, max=1 << 20, doc="reference points (columns of out)"),
        Param("D", 128, min=1, max=1 << 14, doc="features per point"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: each 128x128 tile sums (x_k - y_k)^2 one feature at a time in FP32 (FMA pipes)",
            (_DIRECT,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: ||x||^2 + ||y||^2 - 2 x.y, the product with tl.dot on the tensor cores",
            (_EXPANSION,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
