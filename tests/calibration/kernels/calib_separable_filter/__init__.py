"""Calibration pair (thirteenth held-back set) — a separable filter applied as a full 2-D stencil: a Gaussian
blur of an image (a K x K kernel that is the outer product of a 1-D kernel with itself, as every Gaussian is)
computed output by output as K² taps, where two 1-D passes (a row pass of K taps into a scratch image, then a
column pass of K taps) give the same result with 2K taps. Sources: V. Podlozhnyuk, "Image Convolution with
CUDA" (NVIDIA CUDA SDK white paper, 2007, and the CUDA samples' convolutionSeparable: "a separable filter ...
reduces the cost from K² to 2K operations a pixel"); OpenCV's sepFilter2D / GaussianBlur (which take the
separable path for Gaussian kernels).

The work: an H x W fp32 image (8192 x 8192 at the defaults), a 1-D kernel g of K = 2R + 1 = 15 taps (a
normalised Gaussian, sigma 2.5), zero padding at the borders: out[y, x] = sum_{i,j} g[i] g[j] in[y+i-R, x+j-R].
One program per 32 x 64 output tile, 4 warps.

Planted problem (v0): the 2-D kernel w[i, j] = g[i] g[j] (a K x K array, as a blur written from its 2-D
formula holds it) applied directly: for each of the K² taps, the shifted 32 x 64 input tile loaded (from
the L1/L2: neighbouring taps read the same lines) and multiplied by its weight: 225 loads and 225 FMAs an
output.
Fix (v1): stage "rows": tmp[y, x] = sum_j g[j] in[y, x+j-R] (K loads and FMAs an output, tmp fp32); stage
"cols": out[y, x] = sum_i g[i] tmp[y+i-R, x]: 2K = 30 loads and FMAs an output, plus the scratch image
written and read once (2 x 4 bytes a pixel of DRAM traffic more).

Model: v0 "blur": FLOPs 2·K²·H·W, bytes 2·4·H·W (the image read once, the output written once); v1 "rows"
2·K·H·W and 2·4·H·W, "cols" the same.

Expected on an H100 SXM (per design): v0 issues K² = 225 tile loads an output, one L1 wavefront or two (the
shifted tiles straddle lines) per 32 values: ~0.5-1 G wavefronts at ~1 a clock per SM: ~2-4 ms, the L1/LSU
path the limiter (the FMA pipe at a quarter of its rate or less); v1 30 loads an output plus 1 GB of DRAM
traffic: ~0.4-0.6 ms: ~4-7x. Cause "move_work" (the same result by a cheaper method: 2K instead of K² taps;
the fix does not remove re-reads of data it still needs, it removes taps); resource "l1" (the level the
taps' loads run on now).
Tolerance: sums of 225 (or 2 x 15) positive-weighted fp32 products in another order: 1e-5 relative.
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def gauss(k, device):
    import torch

    r = k // 2
    x = torch.arange(-r, r + 1, dtype=torch.float64)
    g = torch.exp(-(x * x) / (2 * 2.5**2))
    return (g / g.sum()).to(device)


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    h, w, k = p["H"], p["W"], p["K"]
    if k % 2 == 0:
        raise ValueError(f"K ({k}) must be odd")
    g1 = gauss(k, "cpu")
    return {
        "x": torch.rand(h, w, generator=g).to(device=device, dtype=torch.float32),
        "g": g1.float().to(device),  # the 1-D kernel (v1)
        "w2": torch.outer(g1, g1).float().contiguous().to(device),  # the 2-D kernel (v0)
        "tmp": torch.empty(h, w, device=device, dtype=torch.float32),  # v1's scratch image
        # Poisoned output: a version that does not write every pixel fails the check.
        "out": torch.full((h, w), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch.nn.functional as F

    k = p["K"]
    x = inputs["x"].double()[None, None]
    w = inputs["w2"].double()[None, None]
    return F.conv2d(x, w, padding=k // 2)[0, 0].float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _px(p):
    return float(p["H"] * p["W"])


_BLUR = StageModel("blur", flops=lambda p: 2.0 * p["K"] ** 2 * _px(p), bytes=lambda p: 8.0 * _px(p))
_ROWS = StageModel("rows", flops=lambda p: 2.0 * p["K"] * _px(p), bytes=lambda p: 8.0 * _px(p))
_COLS = StageModel("cols", flops=lambda p: 2.0 * p["K"] * _px(p), bytes=lambda p: 8.0 * _px(p))

KERNEL = KernelPackage(
    name="calib_separable_filter",
    description="Calibration (held back, set 13; planted: a separable filter applied as a full 2-D stencil): "
    "a 15 x 15 Gaussian blur of an 8192 x 8192 fp32 image; v0 225 taps an output from the 2-D kernel, v1 a row "
    "pass and a column pass of 15 taps each through a scratch image",
    params=(
        Param("H", 8192, min=1, max=1 << 15, doc="image rows"),
        Param("W", 8192, min=1, max=1 << 15, doc="image columns"),
        Param("K", 15, min=1, max=63, doc="taps of the 1-D kernel (odd)"),
        Param("dtype", "float32", choices=("float32",), doc="image dtype"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0", "planted: the K x K kernel applied directly (K² taps an output)", (_BLUR,), _build("v0")
        ),
        Version(
            "v1", "fix: a row pass and a column pass of K taps (separable)", (_ROWS, _COLS), _build("v1")
        ),
    ),
    memory_bytes=lambda p: 16.0 * _px(p),
    tolerance=lambda dtype: 1e-5,
)
