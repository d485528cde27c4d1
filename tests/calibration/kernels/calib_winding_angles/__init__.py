"""Calibration pair (thirty-seventh held-back set) — winding numbers of points about a polygon by the
angle-summation test (the angle each edge subtends at the point summed over the edges: two atan2 an edge, as
P. Bourke's widely copied "Angle2D" writes it), where D. Sunday's crossing form of the winding number serves
(signed crossings of the point's horizontal ray: a cross product and four compares an edge). Sources: D. Sunday,
"Inclusion of a Point in a Polygon" (geomalgorithms.com, 2001: "the winding number ... can be computed as
efficiently as the crossing number"; the angle-sum method "is very inefficient", inverse trig an edge); P.
Bourke, "Determining if a point lies on the interior of a polygon" (1987, solution 2: the angle sum, Angle2D
with two atan2); E. Haines, "Point in Polygon Strategies" (Graphics Gems IV, 1994: the angle-summation test the
slowest of those compared); K. Hormann and A. Agathos, "The point in polygon problem for arbitrary polygons"
(Computational Geometry 20, 2001); M. Abramowitz and I. Stegun, 4.4.49 (the arctangent polynomial).

The work: w [N] int32 = the winding number of each point (px, py) fp32 about a closed polygon of E = 64 vertices
winding twice around the origin (self-intersecting: numbers 0, 1 and 2), the same in both versions (up to points
within rounding of an edge).

Planted problem (v0): stage "winding_angles": a point a lane, for each edge two atan2 (each a division, an 8-FMA
polynomial and octant selects: ~25 instructions), the difference wrapped and summed: ~60 instructions an edge.
Fix (v1): stage "winding_crossings": for each edge a cross product and four compares: ~12 instructions an edge.

Model (the needed work, for both): the crossing form: FLOPs 4 N E (two subtractions and the cross product's two
products and difference, ~4 a pair counted as FLOPs); bytes px, py read, w written: 12 N (the polygon, 8 (E + 1)
bytes, read once a program from L1/L2).

Expected on an H100/H200 (per design): N = 2^21, E = 64: v0 2.1e6 x 64 x ~60 = 8e9 lane-instructions on the FP32
pipes (~3.4e13 a second): ~0.25-0.4 ms; v1 ~1.6e9: ~50-80 us: ~4-6x. Cause "move_work" (the needed winding
numbers by a costlier method: two arctangents an edge for a sign test); resource "fma" (atan2's division and
polynomial run on the FP32 pipes; its reciprocal on the XU is a small share).
"""

import math

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    n, e = p["N"], p["E"]
    pts = (torch.rand(n, 2, generator=g, dtype=torch.float64) * 2.2 - 1.1).float()
    ang = torch.arange(e + 1, dtype=torch.float64) * (4.0 * math.pi / e)  # twice around
    rad = 0.55 + 0.45 * torch.rand(e + 1, generator=g, dtype=torch.float64)
    rad[e] = rad[0]  # closed: the first vertex repeated last
    vx = (rad * torch.cos(ang)).float()
    vy = (rad * torch.sin(ang)).float()
    vx[e], vy[e] = vx[0], vy[0]
    return {
        "px": pts[:, 0].contiguous().to(device),
        "py": pts[:, 1].contiguous().to(device),
        "vx": vx.to(device),
        "vy": vy.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((n,), -1, device=device, dtype=torch.int32),
    }


def _reference(inputs, p):
    import torch

    px, py = inputs["px"].double(), inputs["py"].double()
    vx, vy = inputs["vx"].double().cpu().tolist(), inputs["vy"].double().cpu().tolist()
    w = torch.zeros_like(px, dtype=torch.int64)
    for i in range(p["E"]):
        ax, ay, bx, by = vx[i] - px, vy[i] - py, vx[i + 1] - px, vy[i + 1] - py
        c = ax * by - bx * ay
        w += ((ay <= 0) & (by > 0) & (c > 0)).long() - ((ay > 0) & (by <= 0) & (c < 0)).long()
    return w.to(torch.int32)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 4.0 * p["N"] * p["E"]


def _bytes(p):
    return 12.0 * p["N"] + 8.0 * (p["E"] + 1)


KERNEL = KernelPackage(
    name="calib_winding_angles",
    description="Calibration (held back, set 37; planted: winding numbers by summing the angles the edges "
    "subtend, two atan2 an edge, where Sunday's signed crossings serve): 2^21 points, a 64-edge polygon "
    "winding twice; v0 the angle sum, v1 the crossing form",
    params=(
        Param("N", 1 << 21, min=1, max=1 << 26, doc="points"),
        Param("E", 64, min=3, max=4096, doc="polygon edges"),
        DTYPE_PARAM("int32", choices=("int32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the angle-summation test, two atan2 an edge (Bourke's Angle2D)",
            (StageModel("winding_angles", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: Sunday's crossing form of the winding number",
            (StageModel("winding_crossings", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 2e-2,
)
