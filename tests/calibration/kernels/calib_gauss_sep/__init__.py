"""Calibration pair (twenty-first held-back set) — a sum of 2-D Gaussians evaluated with one exponential per
(pixel, centre) where the product of two 1-D Gaussians serves: a density map (crowd-counting ground truth,
keypoint heatmaps, a Gaussian-mixture density on a grid) D(i, j) = Σ_k w_k · exp(-((i - cy_k)² + (j - cx_k)²)
/ (2σ²)) evaluated as written: an exponential for every pixel and every centre. The isotropic Gaussian is
separable, exp(-(a + b)) = exp(-a) · exp(-b): per centre, a program needs the exponentials of its BM rows and
its BN columns (BM + BN of them) and one multiply-add a pixel. Nothing fails; the values are the same up to
rounding. Sources: the separability of the Gaussian (Gonzalez & Woods, "Digital Image Processing", §3.5;
OpenCV's getGaussianKernel builds the 2-D kernel as an outer product of 1-D ones), and the CUDA C++
Programming Guide ("Arithmetic Instructions": the special-function exponential, ex2.approx, has a quarter of
the FP32 throughput, 16 results per clock per SM against 128 FMAs on compute capability 9.0).

The work: D [H, W] fp32 (H = W = 2048), K = 64 centres (cx, cy uniform on the grid, weights w ~ U(0.5, 1.5)),
σ = 24 pixels; pixel (i, j) at coordinates (y, x) = (i, j).

Planted problem (v0): stage "gauss2d": tiles [32, 128], for each centre the tile's 4096 exponentials
(exp(-(dy² + dx²) / 2σ²) on the MUFU pipe) and 4 FP32 operations a pair: H·W·K = 268 M exponentials.
Fix (v1): stage "gauss_outer": the same tiles; for each chunk of 32 centres the rows' factors w_k·exp(-dy²/2σ²)
[32, 32] and the columns' factors exp(-dx²/2σ²) [32, 128] (5120 exponentials for the chunk's 131072 pairs),
the tile accumulated as their product (tl.dot in IEEE fp32: FMAs, one a pair): 10.5 M exponentials, 268 M
FMAs.

Model (both): bytes the output written once (+ the centres); FLOPs 6 a pair (the work the result needs in the
direct form: v0; the factored form counts 2 a pair plus 6 a row or column: v1).

Expected on an H100 SXM (per design): v0 268 M ex2 at 16 a clock on 132 SMs at ~1.98 GHz ~65 µs (its ~3 FP32
operations a pair at 128 a clock ~32 µs under it); v1 268 M FMAs (~8 µs at peak; Triton's FMA dot feeds them
from shared memory, ~200 shared loads a thread per chunk of 32 centres, which may hold it near ~20-25 µs) plus
the 16 MB store: ~2.5-4x. Cause "move_work" (the needed values by a costlier method: an exponential a pair
where the factored form serves), resource "xu" (the special-function pipe the bad version's time is spent on).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

SIGMA = 24.0


def _inputs(p, device):
    import torch

    h, w, k = p["H"], p["W"], p["K"]
    g = torch.Generator(device="cpu").manual_seed(0)
    cx = torch.rand(k, generator=g) * w
    cy = torch.rand(k, generator=g) * h
    wt = 0.5 + torch.rand(k, generator=g)
    return {
        "cx": cx.to(device),
        "cy": cy.to(device),
        "w": wt.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((h, w), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    h, w = p["H"], p["W"]
    dev = inputs["cx"].device
    ys = torch.arange(h, device=dev, dtype=torch.float64)
    xs = torch.arange(w, device=dev, dtype=torch.float64)
    s = 2.0 * SIGMA * SIGMA
    ey = inputs["w"].double()[:, None] * torch.exp(-((ys[None, :] - inputs["cy"].double()[:, None]) ** 2) / s)
    ex = torch.exp(-((xs[None, :] - inputs["cx"].double()[:, None]) ** 2) / s)
    return (ey.T @ ex).to(torch.float32)  # Σ_k ey[k, i] ex[k, j]


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _pairs(p):
    return float(p["H"]) * p["W"] * p["K"]


def _bytes(p):
    return 4.0 * p["H"] * p["W"] + 12.0 * p["K"]


_DIRECT = StageModel("gauss2d", flops=lambda p: 6.0 * _pairs(p), bytes=_bytes)
_OUTER = StageModel(
    "gauss_outer", flops=lambda p: 2.0 * _pairs(p) + 6.0 * p["K"] * (p["H"] + p["W"]), bytes=_bytes
)

KERNEL = KernelPackage(
    name="calib_gauss_sep",
    description="Calibration (held back, set 21; planted: a sum of 2-D Gaussians evaluated with one "
    "exponential per (pixel, centre) where the product of two 1-D Gaussians serves): D [2048, 2048] fp32 from "
    "64 centres; v0 exp(-(dy² + dx²)/2σ²) a pair, v1 the outer product of w·exp(-dy²/2σ²) and exp(-dx²/2σ²)",
    params=(
        Param("H", 2048, min=1, max=16384, doc="rows"),
        Param("W", 2048, min=1, max=16384, doc="columns"),
        Param("K", 64, min=1, max=4096, doc="centres"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: an exponential for every (pixel, centre) pair",
            (_DIRECT,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: per centre, the exponentials of the tile's rows and columns, their outer product accumulated",
            (_OUTER,),
            _build("v1"),
        ),
    ),
    memory_bytes=lambda p: _bytes(p),
    tolerance=lambda dtype: 1e-4,
)
