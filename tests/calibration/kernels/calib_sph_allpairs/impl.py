"""Triton code of calib_sph_allpairs (imported only by the profiling worker).

allpairs_kernel (v0): BLOCK_I particles a program against all N particles, BLOCK_J at a time; a [BLOCK_I,
BLOCK_J] accumulator of the poly6 terms (0 beyond h = 1), summed once at the end.
cellgrid_kernel (v1): one particle a lane; the particle of each of its 3 x 3 cells (cell (cx + dx, cy + dy),
particle index (cy + dy) GX + cx + dx) gathered and its term added.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_I, BLOCK_J, WARPS_V0 = 32, 128, 4
BLOCK, WARPS_V1 = 128, 4


@triton.jit
def allpairs_kernel(x_ptr, y_ptr, o_ptr, N, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr):
    offs_i = tl.program_id(0) * BLOCK_I + tl.arange(0, BLOCK_I)
    mask_i = offs_i < N
    xi = tl.load(x_ptr + offs_i, mask=mask_i, other=0.0)
    yi = tl.load(y_ptr + offs_i, mask=mask_i, other=0.0)
    acc = tl.zeros((BLOCK_I, BLOCK_J), dtype=tl.float32)
    for j0 in range(0, N, BLOCK_J):
        offs_j = j0 + tl.arange(0, BLOCK_J)
        mask_j = offs_j < N
        # a particle past the end placed far away: its terms are 0
        xj = tl.load(x_ptr + offs_j, mask=mask_j, other=1.0e4)
        yj = tl.load(y_ptr + offs_j, mask=mask_j, other=1.0e4)
        dx = xi[:, None] - xj[None, :]
        dy = yi[:, None] - yj[None, :]
        r2 = dx * dx + dy * dy
        t = 1.0 - r2
        acc += tl.where(r2 < 1.0, t * t * t, 0.0)
    rho = tl.sum(acc, axis=1) * 1.5666814710608448
    tl.store(o_ptr + offs_i, rho, mask=mask_i)


@triton.jit
def cellgrid_kernel(x_ptr, y_ptr, o_ptr, GX: tl.constexpr, GY: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < GX * GY
    cx = offs % GX
    cy = offs // GX
    xi = tl.load(x_ptr + offs, mask=mask, other=0.0)
    yi = tl.load(y_ptr + offs, mask=mask, other=0.0)
    rho = tl.zeros((BLOCK,), dtype=tl.float32)
    for dy in tl.static_range(-1, 2):
        for dx in tl.static_range(-1, 2):
            nx = cx + dx
            ny = cy + dy
            ok = mask & (nx >= 0) & (nx < GX) & (ny >= 0) & (ny < GY)
            j = ny * GX + nx
            xj = tl.load(x_ptr + j, mask=ok, other=1.0e4)
            yj = tl.load(y_ptr + j, mask=ok, other=1.0e4)
            ddx = xi - xj
            ddy = yi - yj
            r2 = ddx * ddx + ddy * ddy
            t = 1.0 - r2
            rho += tl.where(r2 < 1.0, t * t * t, 0.0)
    tl.store(o_ptr + offs, rho * 1.5666814710608448, mask=mask)


def build_v0(inputs, params):
    x, y, out = inputs["px"], inputs["py"], inputs["out"]
    n = params["GX"] * params["GY"]
    grid = triton.cdiv(n, BLOCK_I)

    def run():
        return allpairs_kernel[(grid,)](x, y, out, n, BLOCK_I=BLOCK_I, BLOCK_J=BLOCK_J, num_warps=WARPS_V0)

    st = Stage(
        "sph_allpairs",
        run,
        kernel=allpairs_kernel,
        tiling={"BLOCK_I": BLOCK_I, "BLOCK_J": BLOCK_J, "grid": [grid]},
        grid_blocks=grid,
    )
    return Plan([st], output=lambda: out)


def build_v1(inputs, params):
    x, y, out = inputs["px"], inputs["py"], inputs["out"]
    gx, gy = params["GX"], params["GY"]
    grid = triton.cdiv(gx * gy, BLOCK)

    def run():
        return cellgrid_kernel[(grid,)](x, y, out, GX=gx, GY=gy, BLOCK=BLOCK, num_warps=WARPS_V1)

    st = Stage(
        "sph_cellgrid",
        run,
        kernel=cellgrid_kernel,
        tiling={"BLOCK": BLOCK, "grid": [grid]},
        grid_blocks=grid,
    )
    return Plan([st], output=lambda: out)
