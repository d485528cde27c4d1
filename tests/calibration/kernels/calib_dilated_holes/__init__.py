"""Calibration pair (thirty-fifth held-back set) — a dilated (à trous) 1-D convolution over a channels-last
sequence applied with its filter expanded by inserted zeros (the "holes": a 9-tap filter at dilation 8 stored
as a dense 65-tap filter, 56 of its taps zero, and convolved tap by tap), where taking the 9 real taps at the
dilation's stride serves. Sources: M. Holschneider et al., "A real-time algorithm for signal analysis with the
help of the wavelet transform" (1989: the algorithme à trous); L.-C. Chen et al., "DeepLab" (2017), section 3.1
(atrous convolution: "upsample the filters by inserting zeros" is the naive form, sampling the input at the
rate the efficient one); A. van den Oord et al., "WaveNet" (2016, dilated causal convolutions); F. Yu and V.
Koltun, "Multi-Scale Context Aggregation by Dilated Convolutions" (2016); the Triton matrix-multiplication
tutorial (tl.dot tiles).

The work: Y [T, C] fp32 = sum over k of X[t + (k - 4) D] @ W[k] (zero padding), X [T, C] fp16, W [9, C, C]
fp16 (C_in x C_out), D = 8, the same result in both versions (the zero taps add exact zeros).

Planted problem (v0): stage "conv_holes": a program a [128, C] output tile; for each of the 65 taps of the
zero-expanded filter W65 [65, C, C] (built once, as the naive à-trous code stores it) the shifted input tile
[128, C] and the tap [C, C] loaded and multiplied by tl.dot: 65 MMAs a tile, 56 of them by zero matrices.
Fix (v1): stage "conv_dilated": the 9 real taps, the input tile shifted by (k - 4) D: 9 MMAs a tile.

Model (the needed work, for both): FLOPs 2 x T x C x C x 9; bytes X and W read, Y written: 2 T C + 18 C^2 +
4 T C.

Expected on an H100/H200 (per design): T = 65536, C = 128: v1 1.9e10 FLOPs (fp16 tensor cores at ~40-60 % of
the roof, its tiles' loads from L2): ~40-70 us; v0 65/9 of it, 1.4e11 FLOPs: ~0.25-0.5 ms: ~5-7x. Cause
"move_work" (the needed convolution by a costlier method: 7.2x the MMAs); resource "tensor" (the MMAs by zero
taps and their operand loads).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

TAPS, DIL = 9, 8


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    t, c = p["T"], p["C"]
    x = torch.randn(t, c, generator=g).half()
    w = (torch.randn(TAPS, c, c, generator=g) / (TAPS * c) ** 0.5).half()
    holes = torch.zeros((TAPS - 1) * DIL + 1, c, c, dtype=torch.float16)
    holes[::DIL] = w  # the filter "upsampled by inserting zeros"
    return {
        "X": x.to(device),
        "W": w.to(device),
        "W_holes": holes.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((t, c), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    x, w = inputs["X"].double().cpu(), inputs["W"].double().cpu()
    t = x.shape[0]
    y = torch.zeros(t, x.shape[1], dtype=torch.float64)
    half = (TAPS - 1) // 2
    for k in range(TAPS):
        s = (k - half) * DIL
        lo, hi = max(0, -s), min(t, t - s)
        if lo < hi:
            y[lo:hi] += x[lo + s : hi + s] @ w[k]
    return y.float().to(inputs["X"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * p["T"] * p["C"] ** 2 * TAPS


def _bytes(p):
    return 6.0 * p["T"] * p["C"] + 2.0 * TAPS * p["C"] ** 2


KERNEL = KernelPackage(
    name="calib_dilated_holes",
    description="Calibration (held back, set 35; planted: a dilated convolution applied through its "
    "zero-expanded filter where the dilated taps serve): X [65536, 128] fp16, 9 taps at dilation 8; v0 65 "
    "MMAs a tile (56 by zero taps), v1 9",
    params=(
        Param("T", 65536, min=1, max=1 << 22, doc="sequence length"),
        Param("C", 128, min=16, max=256, doc="channels in and out (a power of two)"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the zero-expanded 65-tap filter convolved tap by tap (a tl.dot a tap)",
            (StageModel("conv_holes", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the 9 real taps at the dilation's stride",
            (StageModel("conv_dilated", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 2e-3,
)
