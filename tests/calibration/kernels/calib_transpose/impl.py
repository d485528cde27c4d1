"""Triton code of calib_transpose (imported only by the profiling worker)."""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

V0_BLOCK = 1024   # rows of x (elements of an output row) per step of a v0 program
V0_WARPS = 4
V1_TILE = 64
V1_WARPS = 8
SPREAD = 8        # 8 fp32 columns share a 32-byte sector: hand them to programs N/8 apart


@triton.jit
def transpose_columns_kernel(x_ptr, out_ptr, M, N, GROUPS, BLOCK: tl.constexpr, SPREAD: tl.constexpr):
    """v0: program p copies column c of x (stride N) into row c of out (contiguous)."""
    p = tl.program_id(0)
    # GROUPS = cdiv(N, SPREAD): columns 0, 8, 16, ... first, then 1, 9, 17, ...: a 32-byte sector
    # of x is needed again only GROUPS programs later, long after it has left L2.
    col = (p % GROUPS) * SPREAD + p // GROUPS
    if col < N:
        for m0 in range(0, M, BLOCK):
            rows = m0 + tl.arange(0, BLOCK)
            mask = rows < M
            v = tl.load(x_ptr + rows.to(tl.int64) * N + col, mask=mask)  # strided: one element per sector
            tl.store(out_ptr + col.to(tl.int64) * M + rows, v, mask=mask)  # contiguous


@triton.jit
def transpose_tiles_kernel(x_ptr, out_ptr, M, N, TILE: tl.constexpr):
    """v1: a TILE x TILE tile of x, loaded along its rows, stored transposed along the rows of out."""
    rm = tl.program_id(0) * TILE + tl.arange(0, TILE)
    rn = tl.program_id(1) * TILE + tl.arange(0, TILE)
    tile = tl.load(x_ptr + rm[:, None].to(tl.int64) * N + rn[None, :],
                   mask=(rm[:, None] < M) & (rn[None, :] < N))
    tl.store(out_ptr + rn[:, None].to(tl.int64) * M + rm[None, :], tl.trans(tile),
             mask=(rn[:, None] < N) & (rm[None, :] < M))


def build_v0(inputs, p):
    x, out = inputs["x"], inputs["out"]
    M, N = p["M"], p["N"]
    groups = triton.cdiv(N, SPREAD)
    programs = groups * SPREAD  # programs whose column is >= N (N not a multiple of 8) do nothing
    block = min(V0_BLOCK, triton.next_power_of_2(M))
    tiling = {"BLOCK": block, "num_warps": V0_WARPS, "num_stages": 3, "programs": programs,
              "column_order": f"c = (p % {groups})*{SPREAD} + p // {groups}"}

    def run():
        return transpose_columns_kernel[(programs,)](x, out, M, N, groups, BLOCK=block, SPREAD=SPREAD,
                                                     num_warps=V0_WARPS, num_stages=3)

    return Plan([Stage("transpose", run, kernel=transpose_columns_kernel, tiling=tiling, grid_blocks=programs)],
                output=lambda: out)


def build_v1(inputs, p):
    x, out = inputs["x"], inputs["out"]
    M, N = p["M"], p["N"]
    grid = (triton.cdiv(M, V1_TILE), triton.cdiv(N, V1_TILE))
    tiling = {"TILE": V1_TILE, "num_warps": V1_WARPS, "num_stages": 3, "programs": grid[0] * grid[1]}

    def run():
        return transpose_tiles_kernel[grid](x, out, M, N, TILE=V1_TILE, num_warps=V1_WARPS, num_stages=3)

    return Plan([Stage("transpose", run, kernel=transpose_tiles_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])],
                output=lambda: out)
