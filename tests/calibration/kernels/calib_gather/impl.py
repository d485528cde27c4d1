import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage


@triton.jit
def gather_cols_kernel(table_ptr, idx_ptr, out_ptr, B, D, BLOCK: tl.constexpr):
    pb = tl.program_id(0)  # fastest: every batch block of one column before the next column
    d = tl.program_id(1)
    i = pb * BLOCK + tl.arange(0, BLOCK)
    mask = i < B
    rows = tl.load(idx_ptr + i, mask=mask, other=0)
    v = tl.load(table_ptr + rows * D + d, mask=mask)
    tl.store(out_ptr + i.to(tl.int64) * D + d, v, mask=mask)


@triton.jit
def gather_rows_kernel(table_ptr, idx_ptr, out_ptr, B, D, ROWS: tl.constexpr, BLOCK_D: tl.constexpr):
    pb = tl.program_id(0)
    i = pb * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_D)
    mask = (i[:, None] < B) & (cols[None, :] < D)
    rows = tl.load(idx_ptr + i, mask=i < B, other=0)
    v = tl.load(table_ptr + rows[:, None] * D + cols[None, :], mask=mask)
    tl.store(out_ptr + i[:, None].to(tl.int64) * D + cols[None, :], v, mask=mask)


def build_v0(inputs, p):
    t, idx, out = inputs["table"], inputs["idx"], inputs["out"]
    B, D = p["B"], p["D"]
    grid = (triton.cdiv(B, 1024), D)

    def run():
        return gather_cols_kernel[grid](t, idx, out, B, D, BLOCK=1024, num_warps=4)

    return Plan([Stage("gather", run, kernel=gather_cols_kernel, tiling={"BLOCK": 1024, "num_warps": 4},
                       grid_blocks=grid[0] * grid[1])], output=lambda: out)


def build_v1(inputs, p):
    t, idx, out = inputs["table"], inputs["idx"], inputs["out"]
    B, D = p["B"], p["D"]
    block_d = triton.next_power_of_2(D)
    rows = max(1, 4096 // block_d)
    grid = (triton.cdiv(B, rows),)

    def run():
        return gather_rows_kernel[grid](t, idx, out, B, D, ROWS=rows, BLOCK_D=block_d, num_warps=4)

    return Plan([Stage("gather", run, kernel=gather_rows_kernel,
                       tiling={"ROWS": rows, "BLOCK_D": block_d, "num_warps": 4}, grid_blocks=grid[0])],
                output=lambda: out)
