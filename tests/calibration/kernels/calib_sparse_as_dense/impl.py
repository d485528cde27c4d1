"""Triton code of calib_sparse_as_dense (imported only by the profiling worker).

dense_kernel (v0): 8 rows a program, the dense row block read 1024 columns at a time (C a multiple of 1024),
products with x accumulated in an [8, 1024] fp32 tile, summed over the columns at the end.
ell_kernel (v1): 64 rows a program, the [K, 64] tiles of values and columns loaded at once (coalesced across the
rows: [K, R] layout; K a power of two), x gathered, the products summed over K in fp32.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BR, BC, V0_WARPS = 8, 1024, 8
BR1, V1_WARPS = 64, 4


@triton.jit
def dense_kernel(a_ptr, x_ptr, o_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    ok = rows < R
    base = rows.to(tl.int64) * C
    acc = tl.zeros([BR, BC], dtype=tl.float32)
    for c0 in range(0, C, BC):
        cols = c0 + tl.arange(0, BC)
        a = tl.load(a_ptr + base[:, None] + cols[None, :], mask=ok[:, None], other=0.0)
        xv = tl.load(x_ptr + cols)
        acc += a.to(tl.float32) * xv.to(tl.float32)[None, :]
    tl.store(o_ptr + rows, tl.sum(acc, axis=1), mask=ok)


@triton.jit
def ell_kernel(c_ptr, v_ptr, x_ptr, o_ptr, R, K: tl.constexpr, BR: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    ok = rows < R
    offs = tl.arange(0, K)[:, None] * R + rows[None, :]
    col = tl.load(c_ptr + offs, mask=ok[None, :], other=0)
    v = tl.load(v_ptr + offs, mask=ok[None, :], other=0.0)
    xv = tl.load(x_ptr + col)
    tl.store(o_ptr + rows, tl.sum(v.to(tl.float32) * xv.to(tl.float32), axis=0), mask=ok)


def build_v0(inputs, params):
    a, x, out = inputs["A"], inputs["x"], inputs["out"]
    r, c = params["R"], params["C"]
    grid = (triton.cdiv(r, BR),)

    def run():
        return dense_kernel[grid](a, x, out, r, c, BR=BR, BC=BC, num_warps=V0_WARPS)

    st = Stage(
        "gemv_dense",
        run,
        kernel=dense_kernel,
        tiling={"BR": BR, "BC": BC, "grid": list(grid)},
        grid_blocks=grid[0],
    )
    return Plan([st], output=lambda: out)


def build_v1(inputs, params):
    cols, vals, x, out = inputs["cols_t"], inputs["vals_t"], inputs["x"], inputs["out"]
    r, k = params["R"], params["K"]
    grid = (triton.cdiv(r, BR1),)

    def run():
        return ell_kernel[grid](cols, vals, x, out, r, K=k, BR=BR1, num_warps=V1_WARPS)

    st = Stage(
        "spmv_ell", run, kernel=ell_kernel, tiling={"BR": BR1, "grid": list(grid)}, grid_blocks=grid[0]
    )
    return Plan([st], output=lambda: out)
