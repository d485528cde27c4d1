"""Triton code of calib_index_crop (imported only by the profiling worker).

gather_kernel: one program per BLOCK output elements (flat), 4 warps: out[i] = x[idx[i]];
slice_kernel: a 2-D grid (rows, BLOCK_W-column blocks), 4 warps: out[r, j] = x[r * C + C0 + j].

v0: gather; v1: slice.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, BLOCK_W, WARPS = 4096, 1024, 4


@triton.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < N
    src = tl.load(idx_ptr + offs, mask=ok, other=0)
    tl.store(out_ptr + offs, tl.load(x_ptr + src, mask=ok), mask=ok)


@triton.jit
def slice_kernel(x_ptr, out_ptr, C, C0, W, BLOCK_W: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_W + tl.arange(0, BLOCK_W)
    ok = cols < W
    v = tl.load(x_ptr + row * C + C0 + cols, mask=ok)
    tl.store(out_ptr + row * W + cols, v, mask=ok)


def build_v0(inputs, params):
    x, idx, out = inputs["x"], inputs["idx"], inputs["out"]
    n = params["R"] * params["W"]
    grid = (triton.cdiv(n, BLOCK),)

    def run():
        return gather_kernel[grid](x, idx, out, n, BLOCK=BLOCK, num_warps=WARPS)

    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": list(grid)}
    stage = Stage("gather", run, kernel=gather_kernel, tiling=tiling, grid_blocks=grid[0])
    return Plan([stage], output=lambda: out)


def build_v1(inputs, params):
    x, out = inputs["x"], inputs["out"]
    r, c, c0, w = params["R"], params["C"], params["C0"], params["W"]
    grid = (r, triton.cdiv(w, BLOCK_W))

    def run():
        return slice_kernel[grid](x, out, c, c0, w, BLOCK_W=BLOCK_W, num_warps=WARPS)

    tiling = {"BLOCK_W": BLOCK_W, "num_warps": WARPS, "grid": list(grid)}
    stage = Stage("slice", run, kernel=slice_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])
    return Plan([stage], output=lambda: out)
