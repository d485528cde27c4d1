"""Triton code of calib_row_programs (imported only by the profiling worker).

One kernel for both versions: a program normalises ROWS rows of BLOCK_D columns (a [ROWS, BLOCK_D]
tile, reduced along the row):

    v0: ROWS=1, num_warps=1: one row per program, rows programs;
    v1: ROWS=32, num_warps=4: 32 rows per program, rows/32 programs.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

V0 = {"ROWS": 1, "num_warps": 1}
V1 = {"ROWS": 32, "num_warps": 4}


@triton.jit
def normalize_rows_kernel(x_ptr, out_ptr, n_rows, D, ROWS: tl.constexpr, BLOCK_D: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_D)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < D)
    offs = rows[:, None].to(tl.int64) * D + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    norm = tl.sqrt(tl.sum(x * x, axis=1))
    y = x / tl.maximum(norm, 1e-12)[:, None]
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def _build(inputs, p, t):
    x, out = inputs["x"], inputs["out"]
    n_rows, d = p["rows"], p["D"]
    block_d = triton.next_power_of_2(d)
    programs = triton.cdiv(n_rows, t["ROWS"])
    tiling = dict(t, BLOCK_D=block_d, num_stages=1, programs=programs)

    def run():
        return normalize_rows_kernel[(programs,)](
            x, out, n_rows, d, ROWS=t["ROWS"], BLOCK_D=block_d, num_warps=t["num_warps"], num_stages=1
        )

    return Plan(
        [Stage("normalize", run, kernel=normalize_rows_kernel, tiling=tiling, grid_blocks=programs)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, V0)


def build_v1(inputs, p):
    return _build(inputs, p, V1)
