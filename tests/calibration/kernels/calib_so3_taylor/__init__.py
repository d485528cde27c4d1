"""Calibration pair (twenty-eighth held-back set) — rotation matrices from axis-angle vectors (the exponential
map of so(3), R = exp([w]x), as a pose or IMU-integration step computes it for every body, joint or sample)
computed by the matrix exponential's truncated Taylor series, R = sum_k [w]x^k / k! for k = 0..30 (each term a
3x3 product with the skew matrix: ~30 FP32 operations a term, ~900 a rotation), where Rodrigues' closed form,
R = cos t I + (sin t / t) [w]x + ((1 - cos t) / t^2) w w^T for t = |w|, gives the same matrix with one square
root, a sine, a cosine and ~30 operations. The same values up to rounding. Sources: Moler & Van Loan,
"Nineteen Dubious Ways to Compute the Exponential of a Matrix, Twenty-Five Years Later" (SIAM Review 45, 2003),
method 1 (the Taylor series: "dubious"); Murray, Li & Sastry, "A Mathematical Introduction to Robotic
Manipulation" (1994), Proposition 2.5 (Rodrigues' formula); Sola, Deray & Atchuthan, "A micro Lie theory for
state estimation in robotics" (2018), eq. 77 (the closed-form exponential map of SO(3)); the CUDA C++ Programming
Guide, "Arithmetic Instructions" (128 FP32 results per clock per SM).

The work: R [9, B] fp16 = exp([w_b]x) for B = 2^24 axis-angle vectors W [3, B] fp16 (|w| < pi), stored
element-major (component i of vector b at W[i, b], entry (r, c) of rotation b at R[3 r + c, b]: every load and
store coalesced), computed in fp32.

Planted problem (v0): stage "so3_taylor": 3 loads, 30 series terms (the term M_k = M_(k-1) [w]x / k: 18
multiply(-add)s, 3 scalings of the skew entries, 9 additions into R), 9 stores: ~900 FP32 instructions a
rotation (~1.5e10 for 2^24) for 24 bytes of memory traffic.
Fix (v1): stage "so3_rodrigues": the same loads and stores, t^2 = w.w, t = sqrt, sin t, cos t (a series for
t^2 < 1e-6), ~30 FP32 operations: memory-bound.

Model: ~40 FP32 operations a rotation (the closed form's work: the needed work); bytes: W read and R written
once (6 + 18 = 24 B a rotation), for both.

Expected on an H100/H200 (per design): v1 ~110-130 us (400 MB at ~3.3-3.8 TB/s); v0 ~450-550 us (~1.5e10 FP32
instructions at 128 a clock per SM on 132 SMs at ~1.98 GHz): ~3.5-4.5x. Cause "move_work" (the needed value
by a costlier method than a legal alternative: a 30-term series where the closed form serves), resource "fma"
(where the bad version's work runs).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import math

    import torch

    gen = torch.Generator(device="cpu").manual_seed(0)
    axis = torch.randn(3, p["B"], generator=gen)
    axis = axis / axis.norm(dim=0, keepdim=True).clamp_min(1e-6)
    angle = torch.rand(p["B"], generator=gen) * (math.pi - 0.01)
    angle[::97] = 0.0  # the zero rotation (the closed form's series branch)
    angle[1::89] *= 1e-4  # tiny angles
    return {
        "W": (axis * angle).to(torch.float16).to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((9, p["B"]), float("nan"), device=device, dtype=torch.float16),
    }


def _reference(inputs, p):
    import torch

    w = inputs["W"].double()
    x, y, z = w[0], w[1], w[2]
    t2 = x * x + y * y + z * z
    t = t2.sqrt()
    small = t2 < 1e-12
    ts = torch.where(small, torch.ones_like(t), t)
    a = torch.where(small, 1.0 - t2 / 6.0, torch.sin(ts) / ts)
    b = torch.where(small, 0.5 - t2 / 24.0, (1.0 - torch.cos(ts)) / (ts * ts))
    c = torch.cos(t)
    r = torch.stack(
        [
            c + b * x * x,
            -a * z + b * x * y,
            a * y + b * x * z,
            a * z + b * x * y,
            c + b * y * y,
            -a * x + b * y * z,
            -a * y + b * x * z,
            a * x + b * y * z,
            c + b * z * z,
        ]
    )
    return r.to(torch.float16)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 40.0 * p["B"]


def _bytes(p):
    return 24.0 * p["B"]


KERNEL = KernelPackage(
    name="calib_so3_taylor",
    description="Calibration (held back, set 28; planted: rotation matrices from axis-angle vectors by a 30-term "
    "Taylor series of the matrix exponential where Rodrigues' formula serves): R = exp([w]x) for 2^24 vectors "
    "fp16 stored element-major; v0 the series, v1 the closed form",
    params=(
        Param("B", 1 << 24, min=1, max=1 << 27, doc="axis-angle vectors in the batch"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: exp([w]x) by its Taylor series to 30 terms",
            (StageModel("so3_taylor", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: Rodrigues' closed form",
            (StageModel("so3_rodrigues", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 2e-3,
)
