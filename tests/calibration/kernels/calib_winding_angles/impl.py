"""Triton code of calib_winding_angles (imported only by the profiling worker).

Both kernels: one program a block of BLOCK = 512 points (4 warps), a loop over the polygon's E edges (its E + 1
vertices stored closed, the first repeated last: a scalar load of the next vertex an edge, the previous one kept),
the winding number stored as int32.
angle_kernel (v0): the angle-summation test as P. Bourke writes it (Angle2D): for the edge (a, b), both relative
to the point, d = atan2(b) - atan2(a) wrapped into (-pi, pi], summed; w = round(sum / 2 pi). Two atan2 an edge,
each written as math libraries write atan2f (a division min / max, the Abramowitz & Stegun 4.4.49 polynomial of
8 FMAs, the octant fixes).
crossing_kernel (v1): D. Sunday's winding-number test: an upward crossing of the point's horizontal ray with the
point left of the edge counts +1, a downward one with the point right of it -1 (a cross product and compares).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 512, 4


@triton.jit
def atan2(y, x):
    """atan2f as math libraries write it: t = min(|x|, |y|) / max(|x|, |y|) in [0, 1], atan t by the
    Abramowitz & Stegun 4.4.49 polynomial (|error| <= 2e-8), reflected into the point's octant."""
    ax = tl.abs(x)
    ay = tl.abs(y)
    mx = tl.maximum(ax, ay)
    t = tl.minimum(ax, ay) / tl.where(mx == 0.0, 1.0, mx)
    s = t * t
    p = 0.0028662257
    p = p * s - 0.0161657367
    p = p * s + 0.0429096138
    p = p * s - 0.0752896400
    p = p * s + 0.1065626393
    p = p * s - 0.1420889944
    p = p * s + 0.1999355085
    p = p * s - 0.3333314528
    r = t + t * s * p
    r = tl.where(ay > ax, 1.5707963267948966 - r, r)
    r = tl.where(x < 0.0, 3.141592653589793 - r, r)
    return tl.where(y < 0.0, -r, r)


@triton.jit
def angle_kernel(px_ptr, py_ptr, vx_ptr, vy_ptr, o_ptr, N, E, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    px = tl.load(px_ptr + offs, mask=mask, other=0.0)
    py = tl.load(py_ptr + offs, mask=mask, other=0.0)
    ax = tl.load(vx_ptr) - px
    ay = tl.load(vy_ptr) - py
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(1, E + 1):
        bx = tl.load(vx_ptr + i) - px
        by = tl.load(vy_ptr + i) - py
        d = atan2(by, bx) - atan2(ay, ax)
        d = tl.where(d > 3.141592653589793, d - 6.283185307179586, d)
        d = tl.where(d < -3.141592653589793, d + 6.283185307179586, d)
        total += d
        ax = bx
        ay = by
    w = tl.floor(total * 0.15915494309189535 + 0.5).to(tl.int32)
    tl.store(o_ptr + offs, w, mask=mask)


@triton.jit
def crossing_kernel(px_ptr, py_ptr, vx_ptr, vy_ptr, o_ptr, N, E, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    px = tl.load(px_ptr + offs, mask=mask, other=0.0)
    py = tl.load(py_ptr + offs, mask=mask, other=0.0)
    ax = tl.load(vx_ptr) - px
    ay = tl.load(vy_ptr) - py
    w = tl.zeros([BLOCK], dtype=tl.int32)
    for i in range(1, E + 1):
        bx = tl.load(vx_ptr + i) - px
        by = tl.load(vy_ptr + i) - py
        c = ax * by - bx * ay  # > 0: the point left of the edge a -> b
        up = (ay <= 0.0) & (by > 0.0) & (c > 0.0)
        down = (ay > 0.0) & (by <= 0.0) & (c < 0.0)
        w += up.to(tl.int32) - down.to(tl.int32)
        ax = bx
        ay = by
    tl.store(o_ptr + offs, w, mask=mask)


def _build(inputs, params, name, kernel):
    px, py, vx, vy, out = inputs["px"], inputs["py"], inputs["vx"], inputs["vy"], inputs["out"]
    n, e = params["N"], params["E"]
    grid = triton.cdiv(n, BLOCK)

    def run():
        return kernel[(grid,)](px, py, vx, vy, out, n, e, BLOCK=BLOCK, num_warps=WARPS)

    st = Stage(name, run, kernel=kernel, tiling={"BLOCK": BLOCK, "E": e, "grid": [grid]}, grid_blocks=grid)
    return Plan([st], output=lambda: out)


def build_v0(inputs, params):
    return _build(inputs, params, "winding_angles", angle_kernel)


def build_v1(inputs, params):
    return _build(inputs, params, "winding_crossings", crossing_kernel)
