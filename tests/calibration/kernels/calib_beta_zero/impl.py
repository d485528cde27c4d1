"""Triton code of calib_beta_zero (imported only by the profiling worker).

One kernel for both versions, a program of 4 warps per BLOCK_M x BLOCK_N tile of C, the epilogue chosen by a
constexpr:

    v0: READ_C=True: c = C[tile]; C[tile] = alpha * x y^T + beta * c (beta = 0.0 at run time);
    v1: READ_C=False: C[tile] = alpha * x y^T.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import ALPHA

BLOCK_M, BLOCK_N, WARPS = 64, 128, 4


@triton.jit
def outer_kernel(
    x_ptr,
    y_ptr,
    c_ptr,
    M,
    N,
    alpha,
    beta,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    READ_C: tl.constexpr,
):
    pid = tl.program_id(0)
    nbn = tl.cdiv(N, BLOCK_N)
    rows = (pid // nbn) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % nbn) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    acc = (alpha * x)[:, None] * y[None, :]
    ok = (rows[:, None] < M) & (cols[None, :] < N)
    ptrs = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]
    if READ_C:
        c = tl.load(ptrs, mask=ok, other=0.0).to(tl.float32)
        acc = acc + beta * c
    tl.store(ptrs, acc.to(c_ptr.dtype.element_ty), mask=ok)


def _build(inputs, p, read_c):
    x, y, out = inputs["x"], inputs["y"], inputs["out"]
    m, n = out.shape
    grid = triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N)
    tiling = {"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "READ_C": read_c, "num_warps": WARPS, "grid": [grid]}

    def run():
        return outer_kernel[(grid,)](
            x, y, out, m, n, ALPHA, 0.0, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, READ_C=read_c, num_warps=WARPS
        )

    return Plan(
        [Stage("outer", run, kernel=outer_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, True)


def build_v1(inputs, p):
    return _build(inputs, p, False)
