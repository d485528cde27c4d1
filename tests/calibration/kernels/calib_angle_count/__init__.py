"""Calibration pair (twenty-second held-back set) — neighbours on a sphere counted by taking the inverse cosine
of every pair's dot product and comparing the angle with a threshold, where comparing the dot product with the
threshold's cosine serves (acos is decreasing on [-1, 1]: acos(c) < θ exactly when c > cos θ). Every (i, j)
pair pays a clamp and an acosf (written in the kernel as math libraries write it, Abramowitz & Stegun 4.4.46:
a square root on the special-function unit times a degree-7 polynomial of FP32 FMAs, ~15 instructions) for a
one-instruction comparison. Nothing fails; the counts are the same (up to
pairs within rounding of the boundary). The fix: cos θ computed once on the host, `dot > cos θ`. Sources: the
CUDA C++ Programming Guide ("Arithmetic Instructions": throughput of the FP32 and special-function pipes;
"Mathematical Functions": acosf's cost), the Best Practices Guide ("Math Libraries": avoid costly functions
where an algebraic identity serves), and the usual squared-distance comparison of range queries (compare in the
transformed domain, the transform applied once to the threshold).

The work: counts [N] fp32 = #{j : angle(p_i, p_j) < θ} for N = 16384 unit vectors (xyz fp32), θ = 0.3 rad:
268 M pairs, one program a block of 64 points, a loop over the others in chunks of 128.

Planted problem (v0): stage "count_acos": a [64, 128] tile a step, d = x_i x_j + y_i y_j + z_i z_j (3 FMAs a
pair), acos(clamp(d, -1, 1)) < θ summed.
Fix (v1): stage "count_cos": d > cos θ summed.

Model (both): FLOPs 6·N² (the dot products, the comparison and the count), bytes 12·N read, 4·N written.

Expected on an H100 SXM (per design): v1 ~6 instructions a pair, ~50-70 µs; v0 ~20 a pair (plus 1 MUFU a pair
at 16 a clock an SM: ~64 µs of it alone), ~150-250 µs: ~3-4x. Cause "move_work" (the needed comparison by a costlier method),
resource "fma" (the pipe most of the bad version's extra instructions run on: acosf's polynomial; its
square root on the XU is a smaller share).
"""

import math

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

THETA = 0.3  # the angle threshold (radians)


def _inputs(p, device):
    import torch

    n = p["N"]
    g = torch.Generator(device="cpu").manual_seed(0)
    v = torch.randn(n, 3, generator=g, dtype=torch.float64)
    v = (v / v.norm(dim=1, keepdim=True)).to(torch.float32)
    return {
        "x": v[:, 0].contiguous().to(device),
        "y": v[:, 1].contiguous().to(device),
        "z": v[:, 2].contiguous().to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((n,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    v = torch.stack([inputs["x"], inputs["y"], inputs["z"]], dim=1).double()
    d = v @ v.T
    return (d > math.cos(THETA)).sum(dim=1).to(torch.float32)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 6.0 * p["N"] * p["N"]


def _bytes(p):
    return 12.0 * p["N"] + 4.0 * p["N"]


KERNEL = KernelPackage(
    name="calib_angle_count",
    description="Calibration (held back, set 22; planted: neighbours on a sphere counted with an inverse cosine "
    "a pair where comparing the cosine serves): N = 16384 unit vectors, θ = 0.3; v0 acos(dot) < θ, v1 dot > "
    "cos θ",
    params=(
        Param("N", 16384, min=1, max=1 << 20, doc="points"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: acos(clamp(dot, -1, 1)) < θ for every pair",
            (StageModel("count_acos", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: dot > cos θ (cos θ once on the host)",
            (StageModel("count_cos", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-3,
)
