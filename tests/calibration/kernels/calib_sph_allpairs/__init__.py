"""Calibration pair (thirty-sixth held-back set) — an SPH density summation (smoothed-particle hydrodynamics:
rho_i = sum_j m W(|x_i - x_j|, h) with Mueller's poly6 kernel W = 315 / (64 pi h^9) (h^2 - r^2)^3 for r < h, 0
beyond) evaluated over all N^2 particle pairs, every pair farther than the smoothing length tested and
discarded, where a uniform cell grid of side h serves: a particle's neighbours within h lie in its own and the
8 adjacent cells. Sources: M. Mueller, D. Charypar, M. Gross, "Particle-Based Fluid Simulation for
Interactive Applications" (SCA 2003: the poly6 kernel, the grid of cell size h); S. Green, "Particle
Simulation using CUDA" (NVIDIA, 2010: the uniform grid, neighbours from the 27 / 9 adjacent cells);
M. P. Allen, D. J. Tildesley, "Computer Simulation of Liquids" (cell lists: the all-pairs loop's O(N^2)
against the cells' O(N)).

The work: rho [N] fp32 (m = 1, h = 1) of N = GX x GY particles in 2-D, particle i in cell (i % GX, i // GX) of
a GX x GY grid of unit cells (one particle a cell, jittered inside it: the particles are stored in cell order,
as a grid-sorted SPH code keeps them), the same in both versions.

Planted problem (v0): stage "sph_allpairs": every particle against all N particles in [32, 128] tiles (dx, dy,
r^2, h^2 - r^2, its cube, the cutoff select and the add: ~10 FP32 instructions a pair, 9 of them on the FMA
pipe), 6.0e8 pairs for GX x GY = 192 x 128, all but 9 N of them beyond h.
Fix (v1): stage "sph_cellgrid": each particle against the particles of its 3 x 3 cells (9 pairs, their
positions gathered from L1/L2).

Model (the needed work, for both): FLOPs ~10 a pair over the 9 N neighbour pairs; bytes x, y read and rho
written: 12 N.

Expected on an H100/H200 (per design): N = 24576: v0 6.0e8 pairs x ~10 FP32 instructions = 6e9 on the FMA pipes
(~3.3e13 a second): ~0.2-0.35 ms; v1 2.2e5 pairs: ~4-8 us (launch-scale): ~30-60x. Cause "move_work" (the
needed sum by a costlier method: N / 9 ~ 2700x the pairs that contribute); resource "fma" (the FP32 pair
arithmetic).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

POLY6 = 1.5666814710608448  # 315 / (64 pi), h = 1


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    gx, gy = p["GX"], p["GY"]
    i = torch.arange(gx * gy)
    px = (i % gx).float() + torch.rand(gx * gy, generator=g) * 0.96 + 0.02
    py = (i // gx).float() + torch.rand(gx * gy, generator=g) * 0.96 + 0.02
    return {
        "px": px.to(device),
        "py": py.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((gx * gy,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    gx, gy = p["GX"], p["GY"]
    x = inputs["px"].double().cpu().reshape(gy, gx)
    y = inputs["py"].double().cpu().reshape(gy, gx)
    rho = torch.zeros(gy, gx, dtype=torch.float64)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            # neighbour cell (cy + dy, cx + dx) of every cell where it exists
            ys, ye = max(0, -dy), min(gy, gy - dy)
            xs, xe = max(0, -dx), min(gx, gx - dx)
            if ys >= ye or xs >= xe:
                continue
            ddx = x[ys:ye, xs:xe] - x[ys + dy : ye + dy, xs + dx : xe + dx]
            ddy = y[ys:ye, xs:xe] - y[ys + dy : ye + dy, xs + dx : xe + dx]
            r2 = ddx * ddx + ddy * ddy
            rho[ys:ye, xs:xe] += torch.where(r2 < 1.0, (1.0 - r2) ** 3, torch.zeros_like(r2))
    return (POLY6 * rho).reshape(-1).float().to(inputs["px"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 10.0 * 9 * p["GX"] * p["GY"]


def _bytes(p):
    return 12.0 * p["GX"] * p["GY"]


KERNEL = KernelPackage(
    name="calib_sph_allpairs",
    description="Calibration (held back, set 36; planted: an SPH density summed over all N^2 particle pairs "
    "where the 3 x 3 neighbouring cells of a uniform grid serve): 24576 particles in 2-D; v0 all pairs, v1 the "
    "9 neighbouring cells",
    params=(
        Param("GX", 192, min=1, max=4096, doc="grid cells (particles) along x"),
        Param("GY", 128, min=1, max=4096, doc="grid cells (particles) along y"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the density summed over all N^2 pairs (pairs beyond h tested and discarded)",
            (StageModel("sph_allpairs", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the density summed over the particles of the 3 x 3 neighbouring cells",
            (StageModel("sph_cellgrid", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-5,
)
