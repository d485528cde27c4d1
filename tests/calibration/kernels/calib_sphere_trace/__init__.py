"""Calibration pair (thirty-eighth held-back set) — the first hit of camera rays on a scene given by its signed
distance function (eight spheres of radius 1), found by marching every ray in fixed steps (512 samples of the
distance function to t = 16, the first sign change then refined by 16 bisection steps) where sphere tracing
serves: each step advances the ray by the distance the function returns (no surface can be closer), converging
in tens of steps. Sources: J. C. Hart, "Sphere tracing: a geometric method for the antialiased ray tracing of
implicit surfaces" (The Visual Computer 12, 1996); K. Perlin and E. Hoffert, "Hypertexture" (SIGGRAPH 1989: the
fixed-step march); I. Quilez, "Raymarching distance fields" and "distance functions" (iquilezles.org); B.
Keinert et al., "Enhanced sphere tracing" (STAG 2014).

The work: t [N] fp32 = the distance along each of the N = W^2 unit rays (a pinhole camera at the origin looking
down +z through a W x W image) to the first sphere it hits, 16 for a miss; the scene's distance function
sqrt(min_i |p - c_i|^2) - 1 (eight equal spheres at z in [4.5, 10.5]: about a quarter of the rays hit).
Both versions agree with the analytic first hit to ~1e-4 except on grazing rays (a miss in one and a hit in the
other: ~0.1-0.5 % of the rays; tolerance 5e-2 on the relative norm).

Planted problem (v0): stage "march_fixed_step": 512 fixed steps of 1/32, the distance function at each (a
branch-free loop: the first sample inside kept), then 16 bisection steps: 528 evaluations a ray, each 8 squared
distances (3 subtractions, a product, two FMAs), their minimum, a square root: ~70 instructions.
Fix (v1): stage "sphere_trace": t += d(t) for 96 steps (a ray stops once d <= 1e-4 or t >= 16): 96
evaluations a ray.

Model (the needed work, for both): the sphere tracer's: FLOPs 96 evaluations x 8 spheres x 8 FLOPs a ray;
bytes the three direction components read and t written: 16 N.

Expected on an H100/H200 (per design): W = 512 (2^18 rays): v0 2^18 x 528 x ~70 = 9.7e9 lane instructions, ~3/4
of them FP32 adds, multiplies and FMAs: ~0.3-0.45 ms; v1 96 evaluations: ~55-90 us: ~4.5-5.5x. Cause
"move_work" (the needed hit distances by a costlier method: 5.5x the distance evaluations); resource "fma" (the
evaluations' FP32 arithmetic; one square root an evaluation on the XU).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

M, RADIUS, TMAX = 8, 1.0, 16.0


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    w = p["W"]
    cz = 4.5 + 6.0 * torch.rand(M, generator=g, dtype=torch.float64)
    cx = (torch.rand(M, generator=g, dtype=torch.float64) * 2 - 1) * 0.3 * cz
    cy = (torch.rand(M, generator=g, dtype=torch.float64) * 2 - 1) * 0.3 * cz
    u = (torch.arange(w, dtype=torch.float64) + 0.5) / w - 0.5
    vv, uu = torch.meshgrid(u, u, indexing="ij")
    d = torch.stack([uu.flatten(), vv.flatten(), torch.ones(w * w, dtype=torch.float64)], 1)
    d = (d / d.norm(dim=1, keepdim=True)).float()
    return {
        "dx": d[:, 0].contiguous().to(device),
        "dy": d[:, 1].contiguous().to(device),
        "dz": d[:, 2].contiguous().to(device),
        "c": torch.stack([cx, cy, cz], 1).flatten().float().to(device),  # x, y, z of each centre
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((w * w,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    d = torch.stack([inputs["dx"], inputs["dy"], inputs["dz"]], 1).double()
    c = inputs["c"].double().view(M, 3)
    b = d @ (-c).T  # d . (o - c), o = 0
    disc = b * b - ((c * c).sum(1) - RADIUS * RADIUS)[None, :]
    t = torch.where(disc >= 0, -b - disc.clamp(min=0).sqrt(), torch.full_like(b, TMAX))
    return t.min(1).values.clamp(max=TMAX).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 96.0 * M * 8.0 * p["W"] ** 2


def _bytes(p):
    return 16.0 * p["W"] ** 2 + 12.0 * M


KERNEL = KernelPackage(
    name="calib_sphere_trace",
    description="Calibration (held back, set 38; planted: rays marched in 512 fixed steps plus bisection "
    "where sphere tracing serves): 512 x 512 rays, eight spheres; v0 the fixed-step march, v1 sphere tracing "
    "(96 steps)",
    params=(
        Param("W", 512, min=1, max=4096, doc="image side (W^2 rays)"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: 512 fixed steps of the distance function a ray, then 16 bisection steps",
            (StageModel("march_fixed_step", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: sphere tracing, each step the distance the function returns (96 steps)",
            (StageModel("sphere_trace", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 5e-2,
)
