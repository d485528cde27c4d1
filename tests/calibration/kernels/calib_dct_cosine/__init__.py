"""Calibration pair (thirty-fourth held-back set) — the DCT-II of every frame (the last step of MFCC features, a
JPEG-style transform) computed with a cosine evaluated for every (coefficient, sample) term, where the
transform's basis is a constant matrix: built once, the transform is one matrix product a tile of frames.
Sources: torchaudio.functional.create_dct (the DCT matrix built once) and torchaudio.transforms.MFCC (applied
with torch.matmul); N. Ahmed, T. Natarajan and K. R. Rao, "Discrete Cosine Transform" (IEEE Trans. Computers,
1974); the CUDA C++ Programming Guide (arithmetic-instruction throughput: the special-function units run 16
results an SM a clock against 128 FP32 FMAs); the Triton matrix-multiplication tutorial (tl.dot).

The work: Y [M, N] fp32, Y[m, k] = sum_n X[m, n] cos(pi (2n + 1) k / (2N)) (the unnormalised DCT-II) of the frames
X [M, N] fp32, the same in both versions.

Planted problem (v0): stage "dct_cosines": one frame a program; for each tile of 64 coefficients k and each chunk
of 64 samples n, the tile cos(pi ((2n + 1) k mod 4N) / (2N)) computed (an integer multiply-and-mask, a conversion
and a cosine on the special-function unit for every term: N^2 = 65536 cosines a frame) and multiplied into the
frame's samples.
Fix (v1): stage "dct_basis": the basis C [N, N] (computed once, outside the timed step, as create_dct does) and
Y = X C^T by tl.dot, 64 frames a program (TF32 tensor cores).

Model (the needed work, for both): FLOPs 2 M N^2 (the matrix product); bytes X read and Y written (8 M N) and
the basis read once (4 N^2).

Expected on an H100/H200 (per design): M = 8192, N = 256: v1 ~8-15 us (17 MB at ~2-3 TB/s, 1.1 GFLOP on tensor
cores); v0 5.4e8 cosines (and as many int-to-float conversions) on the special-function units (16 an SM a clock,
~4.2e12 a second): ~0.25-0.5 ms: ~20-50x. Cause "move_work" (the needed transform by a costlier method: a
cosine for every term where a constant basis serves); resource "xu" (the cosines and conversions).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    from . import basis

    g = torch.Generator(device="cpu").manual_seed(0)
    m, n = p["M"], p["N"]
    x = torch.randn(m, n, generator=g)
    return {
        "X": x.to(device),
        "C": basis(n).to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((m, n), float("nan"), device=device, dtype=torch.float32),
    }


def basis(n):
    """C[k, n] = cos(pi (2n + 1) k / (2N)) in fp32, computed in fp64 (torchaudio.functional.create_dct's matrix,
    unnormalised and transposed)."""
    import math

    import torch

    i = torch.arange(n, dtype=torch.float64)
    return torch.cos(math.pi * (2 * i[None, :] + 1) * i[:, None] / (2 * n)).float().contiguous()


def _reference(inputs, p):
    x = inputs["X"].double()
    return (x @ basis(p["N"]).double().to(x.device).T).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * p["M"] * p["N"] ** 2


def _bytes(p):
    return 8.0 * p["M"] * p["N"] + 4.0 * p["N"] ** 2


KERNEL = KernelPackage(
    name="calib_dct_cosine",
    description="Calibration (held back, set 34; planted: a DCT-II with a cosine evaluated for every term where "
    "the constant basis and a matrix product serve): [8192, 256] fp32 frames; v0 N^2 cosines a frame, v1 X C^T",
    params=(
        Param("M", 8192, min=1, max=1 << 20, doc="frames"),
        Param("N", 256, min=64, max=1024, doc="samples a frame (a multiple of 64, a power of two)"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: cos(pi (2n + 1) k / 2N) computed for every (k, n) term of every frame",
            (StageModel("dct_cosines", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the basis built once, Y = X C^T by tl.dot",
            (StageModel("dct_basis", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 2e-3,
)
