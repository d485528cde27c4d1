"""Triton code of calib_angle_count (imported only by the profiling worker).

Both kernels: one program a block of BM = 64 points (4 warps), a loop over all N points in chunks of BN = 128:
the [BM, BN] tile of dot products (3 FMAs a pair), a pair counted when near, the counts summed along the chunk
and stored as fp32.
acos_kernel (v0): near = acos(clamp(dot, -1, 1)) < theta (acosf a pair: a square
root and a degree-7 polynomial, as math libraries write it).
cos_kernel (v1): near = dot > cos_theta.
"""

import math

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

THETA = 0.3  # the package's angle threshold (radians)

BM, BN, WARPS = 64, 128, 4


@triton.jit
def acos(x):
    """acosf as math libraries write it (Abramowitz & Stegun 4.4.46, |error| <= 2e-8): a square root (the
    special-function unit) times a degree-7 polynomial of |x| (7 FMAs), reflected for x < 0."""
    a = tl.abs(x)
    p = -0.0012624911
    p = p * a + 0.0066700901
    p = p * a - 0.0170881256
    p = p * a + 0.0308918810
    p = p * a - 0.0501743046
    p = p * a + 0.0889789874
    p = p * a - 0.2145988016
    p = p * a + 1.5707963050
    r = tl.sqrt(1.0 - a) * p
    return tl.where(x < 0, 3.141592653589793 - r, r)


@triton.jit
def acos_kernel(x_ptr, y_ptr, z_ptr, out_ptr, N, theta, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    rok = rows < N
    xi = tl.load(x_ptr + rows, mask=rok, other=0.0)
    yi = tl.load(y_ptr + rows, mask=rok, other=0.0)
    zi = tl.load(z_ptr + rows, mask=rok, other=0.0)
    cnt = tl.zeros((BM,), tl.float32)
    for j0 in range(0, N, BN):
        cols = j0 + tl.arange(0, BN)
        cok = cols < N
        xj = tl.load(x_ptr + cols, mask=cok, other=0.0)
        yj = tl.load(y_ptr + cols, mask=cok, other=0.0)
        zj = tl.load(z_ptr + cols, mask=cok, other=0.0)
        d = xi[:, None] * xj[None, :] + yi[:, None] * yj[None, :] + zi[:, None] * zj[None, :]
        d = tl.minimum(tl.maximum(d, -1.0), 1.0)
        near = (acos(d) < theta) & cok[None, :]
        cnt += tl.sum(near.to(tl.float32), axis=1)
    tl.store(out_ptr + rows, cnt, mask=rok)


@triton.jit
def cos_kernel(x_ptr, y_ptr, z_ptr, out_ptr, N, cos_theta, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    rok = rows < N
    xi = tl.load(x_ptr + rows, mask=rok, other=0.0)
    yi = tl.load(y_ptr + rows, mask=rok, other=0.0)
    zi = tl.load(z_ptr + rows, mask=rok, other=0.0)
    cnt = tl.zeros((BM,), tl.float32)
    for j0 in range(0, N, BN):
        cols = j0 + tl.arange(0, BN)
        cok = cols < N
        xj = tl.load(x_ptr + cols, mask=cok, other=0.0)
        yj = tl.load(y_ptr + cols, mask=cok, other=0.0)
        zj = tl.load(z_ptr + cols, mask=cok, other=0.0)
        d = xi[:, None] * xj[None, :] + yi[:, None] * yj[None, :] + zi[:, None] * zj[None, :]
        near = (d > cos_theta) & cok[None, :]
        cnt += tl.sum(near.to(tl.float32), axis=1)
    tl.store(out_ptr + rows, cnt, mask=rok)


def _build(name, kernel, arg, inputs, params):
    x, y, z, out = inputs["x"], inputs["y"], inputs["z"], inputs["out"]
    n = params["N"]
    grid = (triton.cdiv(n, BM),)

    def run():
        return kernel[grid](x, y, z, out, n, arg, BM=BM, BN=BN, num_warps=WARPS)

    tiling = {"BM": BM, "BN": BN, "num_warps": WARPS, "grid": list(grid)}
    stage = Stage(name, run, kernel=kernel, tiling=tiling, grid_blocks=grid[0])
    return Plan([stage], output=lambda: out)


def build_v0(inputs, params):
    return _build("count_acos", acos_kernel, THETA, inputs, params)


def build_v1(inputs, params):
    return _build("count_cos", cos_kernel, math.cos(THETA), inputs, params)
