"""Triton code of calib_gather (imported only by the profiling worker)."""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

V0_BLOCK = 1024   # lookups per v0 program (one column of each)
V0_WARPS = 4
V1_ELEMS = 4096   # floats per v1 program: ROWS = V1_ELEMS // next_pow2(D) whole rows
V1_WARPS = 4
SPREAD = 8        # 8 fp32 columns share a 32-byte sector: visit them D/8 sweeps apart


@triton.jit
def gather_columns_kernel(table_ptr, idx_ptr, out_ptr, B, D, GROUPS, BLOCK: tl.constexpr, SPREAD: tl.constexpr):
    """v0: column d of BLOCK lookups; out is written column-major (out_t[d, i], contiguous in i)."""
    pb = tl.program_id(0)     # fastest-varying: a whole sweep over the batch for one column
    slot = tl.program_id(1)
    d = (slot % GROUPS) * SPREAD + slot // GROUPS  # columns 0, 8, 16, ..., then 1, 9, 17, ...
    if d < D:
        i = pb * BLOCK + tl.arange(0, BLOCK)
        mask = i < B
        rows = tl.load(idx_ptr + i, mask=mask, other=0)
        v = tl.load(table_ptr + rows.to(tl.int64) * D + d, mask=mask)  # one element of each random row
        tl.store(out_ptr + d.to(tl.int64) * B + i, v, mask=mask)


@triton.jit
def gather_rows_kernel(table_ptr, idx_ptr, out_ptr, B, D, ROWS: tl.constexpr, BLOCK_D: tl.constexpr):
    """v1: ROWS whole rows (D contiguous floats each) per program, written as rows of out[B, D]."""
    i = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_D)
    rows = tl.load(idx_ptr + i, mask=i < B, other=0)
    mask = (i[:, None] < B) & (cols[None, :] < D)
    v = tl.load(table_ptr + rows.to(tl.int64)[:, None] * D + cols[None, :], mask=mask)
    tl.store(out_ptr + i.to(tl.int64)[:, None] * D + cols[None, :], v, mask=mask)


def build_v0(inputs, p):
    table, idx, out = inputs["table"], inputs["idx"], inputs["out"]
    B, D = p["B"], p["D"]
    groups = triton.cdiv(D, SPREAD)
    block = min(V0_BLOCK, triton.next_power_of_2(B))
    grid = (triton.cdiv(B, block), groups * SPREAD)  # slots whose column is >= D do nothing
    tiling = {"BLOCK": block, "num_warps": V0_WARPS, "num_stages": 3, "programs": grid[0] * grid[1],
              "column_order": f"d = (slot % {groups})*{SPREAD} + slot // {groups}", "output_layout": "column-major"}

    def run():
        return gather_columns_kernel[grid](table, idx, out, B, D, groups, BLOCK=block, SPREAD=SPREAD,
                                           num_warps=V0_WARPS, num_stages=3)

    # out's storage holds out_t[D, B]: its transpose is out[B, D] (a strided view, the same values).
    return Plan([Stage("gather", run, kernel=gather_columns_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])],
                output=lambda: out.view(D, B).t())


def build_v1(inputs, p):
    table, idx, out = inputs["table"], inputs["idx"], inputs["out"]
    B, D = p["B"], p["D"]
    block_d = triton.next_power_of_2(D)
    rows = max(1, V1_ELEMS // block_d)
    grid = (triton.cdiv(B, rows),)
    tiling = {"ROWS": rows, "BLOCK_D": block_d, "num_warps": V1_WARPS, "num_stages": 3, "programs": grid[0]}

    def run():
        return gather_rows_kernel[grid](table, idx, out, B, D, ROWS=rows, BLOCK_D=block_d, num_warps=V1_WARPS,
                                        num_stages=3)

    return Plan([Stage("gather", run, kernel=gather_rows_kernel, tiling=tiling, grid_blocks=grid[0])],
                output=lambda: out)
