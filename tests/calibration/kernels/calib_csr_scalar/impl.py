"""Triton code of calib_csr_scalar (imported only by the profiling worker).

Both versions: one program of 1 warp per row, start/end from the row pointers:

    v0: acc = 0; for j in range(start, end): acc += vals[j] * x[cols[j]]   (scalar loads);
    v1: for j0 in range(start, end, 32): 32 column indices, values and x[columns] loaded at once (a lane
        each, masked at end), a 32-wide fp32 partial product; y = its sum.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 32, 1


@triton.jit
def spmv_scalar(rowptr_ptr, cols_ptr, vals_ptr, x_ptr, out_ptr):
    row = tl.program_id(0)
    start = tl.load(rowptr_ptr + row)
    end = tl.load(rowptr_ptr + row + 1)
    acc = 0.0
    for j in range(start, end):
        c = tl.load(cols_ptr + j)
        acc += tl.load(vals_ptr + j).to(tl.float32) * tl.load(x_ptr + c).to(tl.float32)
    tl.store(out_ptr + row, acc)


@triton.jit
def spmv_vector(rowptr_ptr, cols_ptr, vals_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(rowptr_ptr + row)
    end = tl.load(rowptr_ptr + row + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for j0 in range(start, end, BLOCK):
        j = j0 + tl.arange(0, BLOCK)
        m = j < end
        c = tl.load(cols_ptr + j, mask=m, other=0)
        v = tl.load(vals_ptr + j, mask=m, other=0.0).to(tl.float32)
        acc += v * tl.load(x_ptr + c, mask=m, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, 0))


def _build(inputs, p, fixed):
    rowptr, cols, vals, x, out = (inputs[k] for k in ("rowptr", "cols", "vals", "x", "out"))
    grid = out.numel()
    tiling = {"num_warps": WARPS, "grid": [grid]}
    if fixed:
        tiling["BLOCK"] = BLOCK

    def run():
        if fixed:
            return spmv_vector[(grid,)](rowptr, cols, vals, x, out, BLOCK=BLOCK, num_warps=WARPS)
        return spmv_scalar[(grid,)](rowptr, cols, vals, x, out, num_warps=WARPS)

    return Plan(
        [Stage("spmv", run, kernel=spmv_vector if fixed else spmv_scalar, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
