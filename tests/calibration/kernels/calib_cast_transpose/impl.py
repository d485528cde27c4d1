"""Triton code of calib_cast_transpose (imported only by the profiling worker).

    v0: ``cast_transpose_rows``: program (m, b) loads x[m, b*BLOCK : (b+1)*BLOCK] and stores
        element k to out[k, m] (strided stores: consecutive lanes M elements apart);
    v1: ``cast_transpose_tiles``: program (i, j) loads the tile x[64i : 64i+64, 64j : 64j+64] and
        stores its transpose to out[64j : 64j+64, 64i : 64i+64] (both sides along rows).

Both launch the row index (m, or the row tile i) on grid axis 0, the fastest-varying.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import SCALE

ROW_BLOCK = 1024  # v0: elements of a row per program (8 per thread at 4 warps)
TILE = 64  # v1: 64x64 tiles
WARPS = 4


@triton.jit
def cast_transpose_rows(x_ptr, out_ptr, M, K, s, BLOCK: tl.constexpr):
    m = tl.program_id(0)
    k = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = k < K
    v = tl.load(x_ptr + m.to(tl.int64) * K + k, mask=mask, other=0.0)  # contiguous
    tl.store(out_ptr + k.to(tl.int64) * M + m, (v * s).to(out_ptr.dtype.element_ty), mask=mask)  # M apart


@triton.jit
def cast_transpose_tiles(x_ptr, out_ptr, M, K, s, TILE: tl.constexpr):
    rm = tl.program_id(0) * TILE + tl.arange(0, TILE)
    rk = tl.program_id(1) * TILE + tl.arange(0, TILE)
    mask = (rm[:, None] < M) & (rk[None, :] < K)
    tile = tl.load(x_ptr + rm[:, None].to(tl.int64) * K + rk[None, :], mask=mask, other=0.0)
    out = tl.trans((tile * s).to(out_ptr.dtype.element_ty))
    tl.store(
        out_ptr + rk[:, None].to(tl.int64) * M + rm[None, :], out, mask=(rk[:, None] < K) & (rm[None, :] < M)
    )


def build_v0(inputs, p):
    x, out = inputs["x"], inputs["out"]
    m, k = p["M"], p["K"]
    grid = (m, triton.cdiv(k, ROW_BLOCK))
    programs = grid[0] * grid[1]
    tiling = {"BLOCK": ROW_BLOCK, "num_warps": WARPS, "num_stages": 1, "programs": programs}

    def run():
        return cast_transpose_rows[grid](x, out, m, k, SCALE, BLOCK=ROW_BLOCK, num_warps=WARPS, num_stages=1)

    return Plan(
        [Stage("cast_transpose", run, kernel=cast_transpose_rows, tiling=tiling, grid_blocks=programs)],
        output=lambda: out,
    )


def build_v1(inputs, p):
    x, out = inputs["x"], inputs["out"]
    m, k = p["M"], p["K"]
    grid = (triton.cdiv(m, TILE), triton.cdiv(k, TILE))
    programs = grid[0] * grid[1]
    tiling = {"TILE": TILE, "num_warps": WARPS, "num_stages": 1, "programs": programs}

    def run():
        return cast_transpose_tiles[grid](x, out, m, k, SCALE, TILE=TILE, num_warps=WARPS, num_stages=1)

    return Plan(
        [Stage("cast_transpose", run, kernel=cast_transpose_tiles, tiling=tiling, grid_blocks=programs)],
        output=lambda: out,
    )
