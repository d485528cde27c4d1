"""Triton code of calib_logaddexp (imported only by the profiling worker).

One program per BLOCK_M queries, a loop over the samples BLOCK_N at a time; s = -|x - y|^2 * c with
c = 1 / (2 h^2):

    v0: lse_logaddexp_kernel: acc = log(exp(acc) + exp(s)) per term (acc: -inf at the start);
        out = log(sum(exp(acc), axis=1));
    v1: lse_linear_kernel: acc += exp(s); out = log(sum(acc, axis=1)).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_M, BLOCK_N, WARPS = 64, 128, 4


@triton.jit
def _scores(x_ptr, y_ptr, rows, n, m, j0, c, BLOCK_N: tl.constexpr):
    cols = j0 + tl.arange(0, BLOCK_N)
    cmask = cols < m
    x0 = tl.load(x_ptr + rows * 2, mask=rows < n, other=0.0).to(tl.float32)
    x1 = tl.load(x_ptr + rows * 2 + 1, mask=rows < n, other=0.0).to(tl.float32)
    y0 = tl.load(y_ptr + cols * 2, mask=cmask, other=0.0).to(tl.float32)
    y1 = tl.load(y_ptr + cols * 2 + 1, mask=cmask, other=0.0).to(tl.float32)
    d0 = x0[:, None] - y0[None, :]
    d1 = x1[:, None] - y1[None, :]
    s = -(d0 * d0 + d1 * d1) * c
    return s, cmask


@triton.jit
def lse_logaddexp_kernel(x_ptr, y_ptr, out_ptr, n, m, c, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.full([BLOCK_M, BLOCK_N], float("-inf"), tl.float32)
    for j0 in range(0, m, BLOCK_N):
        s, cmask = _scores(x_ptr, y_ptr, rows, n, m, j0, c, BLOCK_N)
        new = tl.log(tl.exp(acc) + tl.exp(s))
        acc = tl.where(cmask[None, :], new, acc)
    out = tl.log(tl.sum(tl.exp(acc), axis=1))
    tl.store(out_ptr + rows, out, mask=rows < n)


@triton.jit
def lse_linear_kernel(x_ptr, y_ptr, out_ptr, n, m, c, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for j0 in range(0, m, BLOCK_N):
        s, cmask = _scores(x_ptr, y_ptr, rows, n, m, j0, c, BLOCK_N)
        # Every score is <= 0 (a squared distance is never negative): 0 is the stabilising shift.
        acc += tl.where(cmask[None, :], tl.exp(s), 0.0)
    out = tl.log(tl.sum(acc, axis=1))
    tl.store(out_ptr + rows, out, mask=rows < n)


def _plan(kernel, inputs, p):
    x, y, out = inputs["x"], inputs["y"], inputs["out"]
    n, m = x.shape[0], y.shape[0]
    c = p["inv_h"] ** 2 / 2.0
    grid = triton.cdiv(n, BLOCK_M)
    tiling = {"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "num_warps": WARPS, "grid": [grid]}

    def run():
        return kernel[(grid,)](x, y, out, n, m, c, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=WARPS)

    return Plan(
        [Stage("kde_logsumexp", run, kernel=kernel, tiling=tiling, grid_blocks=grid)], output=lambda: out
    )


def build_v0(inputs, p):
    return _plan(lse_logaddexp_kernel, inputs, p)


def build_v1(inputs, p):
    return _plan(lse_linear_kernel, inputs, p)
