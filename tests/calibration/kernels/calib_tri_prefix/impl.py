"""Triton code of calib_tri_prefix (imported only by the profiling worker).

One program per BLOCK_R rows of L values (a [BLOCK_R, L] tile, loaded and stored coalesced), fp32 sums:

    v0: tri_prefix_kernel: for j in range(L): s_j = sum(where(cols <= j, x, 0), axis=1);
        acc = where(cols == j, s_j, acc);
    v1: scan_prefix_kernel: acc = tl.cumsum(x, axis=1).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_R, WARPS = 64, 4


@triton.jit
def tri_prefix_kernel(x_ptr, out_ptr, r, BLOCK_R: tl.constexpr, L: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, L)
    offs = rows[:, None] * L + cols[None, :]
    mask = rows[:, None] < r
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    acc = tl.zeros([BLOCK_R, L], tl.float32)
    for j in range(L):
        s = tl.sum(tl.where(cols[None, :] <= j, x, 0.0), axis=1)
        acc = tl.where(cols[None, :] == j, s[:, None], acc)
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def scan_prefix_kernel(x_ptr, out_ptr, r, BLOCK_R: tl.constexpr, L: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, L)
    offs = rows[:, None] * L + cols[None, :]
    mask = rows[:, None] < r
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    acc = tl.cumsum(x, axis=1)
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)


def _plan(kernel, inputs, p):
    x, out = inputs["x"], inputs["out"]
    r, l = x.shape
    if l & (l - 1):
        raise ValueError(f"L = {l} must be a power of two")
    grid = triton.cdiv(r, BLOCK_R)
    tiling = {"BLOCK_R": BLOCK_R, "L": l, "num_warps": WARPS, "grid": [grid]}

    def run():
        return kernel[(grid,)](x, out, r, BLOCK_R=BLOCK_R, L=l, num_warps=WARPS)

    return Plan(
        [Stage("row_cumsum", run, kernel=kernel, tiling=tiling, grid_blocks=grid)], output=lambda: out
    )


def build_v0(inputs, p):
    return _plan(tri_prefix_kernel, inputs, p)


def build_v1(inputs, p):
    return _plan(scan_prefix_kernel, inputs, p)
