"""Triton code of calib_row_grid_dup (imported only by the profiling worker).

rmsnorm_kernel: one program holds one row (BLOCK_N = N, 8 warps): the row read, sum of squares, rsqrt, times
the weight, stored; the row is program_id(ROW_AXIS).

v0: grid (8, M), ROW_AXIS = 1 (program_id(0) ignored: 8 programs a row); v1: grid (M,), ROW_AXIS = 0.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

WARPS = 8
DUP = 8


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, N, eps, BLOCK_N: tl.constexpr, ROW_AXIS: tl.constexpr):
    row = tl.program_id(ROW_AXIS).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    ok = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=ok, other=0.0).to(tl.float32)
    r = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * N + cols, (x * r * w).to(tl.float16), mask=ok)


def _stage(name, inputs, params, grid, axis):
    x, w, out = inputs["x"], inputs["w"], inputs["out"]
    n = params["N"]
    block = triton.next_power_of_2(n)

    def run():
        return rmsnorm_kernel[grid](x, w, out, n, 1e-6, BLOCK_N=block, ROW_AXIS=axis, num_warps=WARPS)

    tiling = {"BLOCK_N": block, "num_warps": WARPS, "grid": list(grid)}
    return Stage(
        name,
        run,
        kernel=rmsnorm_kernel,
        tiling=tiling,
        grid_blocks=grid[0] * (grid[1] if len(grid) > 1 else 1),
    )


def build_v0(inputs, params):
    out = inputs["out"]
    # the elementwise kernel's grid (cdiv(N, 512) column blocks, M rows) kept for the row kernel
    grid = (DUP, params["M"])
    return Plan([_stage("rmsnorm_dup", inputs, params, grid, 1)], output=lambda: out)


def build_v1(inputs, params):
    out = inputs["out"]
    return Plan([_stage("rmsnorm", inputs, params, (params["M"],), 0)], output=lambda: out)
