"""Triton code of calib_spill_tile (imported only by the profiling worker).

One kernel for both versions: a row softmax over a [BLOCK_M, BLOCK_N] = [64, 256] fp32 tile (64 rows
of 256 values) per program. The versions differ only in ``num_warps``:

    values per thread = 64 * 256 / (32 * num_warps)

    v0: 16384 / 32  = 512 values per thread (one warp): far over the 255 registers -> heavy spills
    v1: 16384 / 256 =  64 values per thread (8 warps): no spills
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_M, BLOCK_N = 64, 256
V0_WARPS = 1
V1_WARPS = 8


@triton.jit
def softmax_tile_kernel(x_ptr, y_ptr, M, N, stride_x, stride_y, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """y[rows] = softmax(x[rows]) for BLOCK_M rows at once; the tile is live across both reductions."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(y_ptr + rows[:, None] * stride_y + cols[None, :], y, mask=mask)


def build(inputs, params, warps):
    x, y = inputs["x"], inputs["y"]
    M, N = params["M"], params["N"]
    programs = triton.cdiv(M, BLOCK_M)
    tiling = {"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "num_warps": warps, "num_stages": 1, "programs": programs,
              "values_per_thread": BLOCK_M * BLOCK_N // (32 * warps)}

    def run():
        return softmax_tile_kernel[(programs,)](x, y, M, N, x.stride(0), y.stride(0), BLOCK_M=BLOCK_M,
                                                BLOCK_N=BLOCK_N, num_warps=warps, num_stages=1)

    return Plan(stages=[Stage("softmax", run, kernel=softmax_tile_kernel, tiling=tiling, grid_blocks=programs)],
                output=lambda: y)


def build_v0(inputs, params):
    return build(inputs, params, V0_WARPS)


def build_v1(inputs, params):
    return build(inputs, params, V1_WARPS)
