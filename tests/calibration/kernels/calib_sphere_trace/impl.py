"""Triton code of calib_sphere_trace (imported only by the profiling worker).

Both kernels: one program a block of BLOCK = 256 rays (4 warps), the eight centres loaded once as scalars, the
scene's distance at p = t d: sqrt(min_i |p - c_i|^2) - 1 (_scene); the hit distance stored (16 for a miss).
fixed_step_kernel (v0): t_i = i h for i = 1..S (S = 512, h = 16 / S), the first t_i with a negative distance
kept (branch-free: every step evaluated), then 16 bisection steps on [t_i - h, t_i].
sphere_trace_kernel (v1): t += d(t) for MAXIT = 96 steps; a ray is done once d <= 1e-4 (a hit) or t >= 16.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS, STEPS, MAXIT = 256, 4, 512, 96


@triton.jit
def _d2(px, py, pz, c_ptr, i: tl.constexpr):
    ex = px - tl.load(c_ptr + 3 * i)
    ey = py - tl.load(c_ptr + 3 * i + 1)
    ez = pz - tl.load(c_ptr + 3 * i + 2)
    return ex * ex + ey * ey + ez * ez


@triton.jit
def _scene(t, dx, dy, dz, c_ptr):
    """The distance to the nearest of the eight unit spheres from p = t d."""
    px = t * dx
    py = t * dy
    pz = t * dz
    m = tl.minimum(_d2(px, py, pz, c_ptr, 0), _d2(px, py, pz, c_ptr, 1))
    m = tl.minimum(m, _d2(px, py, pz, c_ptr, 2))
    m = tl.minimum(m, _d2(px, py, pz, c_ptr, 3))
    m = tl.minimum(m, _d2(px, py, pz, c_ptr, 4))
    m = tl.minimum(m, _d2(px, py, pz, c_ptr, 5))
    m = tl.minimum(m, _d2(px, py, pz, c_ptr, 6))
    m = tl.minimum(m, _d2(px, py, pz, c_ptr, 7))
    return tl.sqrt(m) - 1.0


@triton.jit
def fixed_step_kernel(dx_ptr, dy_ptr, dz_ptr, c_ptr, o_ptr, N, S, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    dx = tl.load(dx_ptr + offs, mask=mask, other=0.0)
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0)
    dz = tl.load(dz_ptr + offs, mask=mask, other=1.0)
    h = 16.0 / S
    hi = tl.full([BLOCK], 16.0, tl.float32)
    found = tl.zeros([BLOCK], dtype=tl.int1)
    for i in range(1, S + 1):
        ti = i * h
        inside = _scene(ti + tl.zeros([BLOCK], tl.float32), dx, dy, dz, c_ptr) < 0.0
        hi = tl.where(inside & (found == 0), ti, hi)
        found = found | inside
    lo = hi - h
    for _ in range(16):
        mid = 0.5 * (lo + hi)
        inside = _scene(mid, dx, dy, dz, c_ptr) < 0.0
        hi = tl.where(inside, mid, hi)
        lo = tl.where(inside, lo, mid)
    tl.store(o_ptr + offs, tl.where(found, hi, 16.0), mask=mask)


@triton.jit
def sphere_trace_kernel(dx_ptr, dy_ptr, dz_ptr, c_ptr, o_ptr, N, ITERS, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    dx = tl.load(dx_ptr + offs, mask=mask, other=0.0)
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0)
    dz = tl.load(dz_ptr + offs, mask=mask, other=1.0)
    t = tl.zeros([BLOCK], dtype=tl.float32)
    active = tl.full([BLOCK], 1, tl.int1)
    hit = tl.zeros([BLOCK], dtype=tl.int1)
    for _ in range(ITERS):
        f = _scene(t, dx, dy, dz, c_ptr)
        hit = hit | (active & (f <= 1e-4))
        active = active & (f > 1e-4) & (t < 16.0)
        t = tl.where(active, t + f, t)
    tl.store(o_ptr + offs, tl.where(hit, tl.minimum(t, 16.0), 16.0), mask=mask)


def _build(inputs, params, name, kernel, iters):
    dx, dy, dz, c, out = inputs["dx"], inputs["dy"], inputs["dz"], inputs["c"], inputs["out"]
    n = dx.numel()
    grid = triton.cdiv(n, BLOCK)

    def run():
        return kernel[(grid,)](dx, dy, dz, c, out, n, iters, BLOCK=BLOCK, num_warps=WARPS)

    st = Stage(
        name, run, kernel=kernel, tiling={"BLOCK": BLOCK, "steps": iters, "grid": [grid]}, grid_blocks=grid
    )
    return Plan([st], output=lambda: out)


def build_v0(inputs, params):
    return _build(inputs, params, "march_fixed_step", fixed_step_kernel, STEPS)


def build_v1(inputs, params):
    return _build(inputs, params, "sphere_trace", sphere_trace_kernel, MAXIT)
