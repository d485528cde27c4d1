import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage


@triton.jit
def transpose_rows_kernel(x_ptr, out_ptr, M, N, BLOCK: tl.constexpr):
    p = tl.program_id(0)
    # Visit columns 8 apart so that concurrently running programs share no 32-byte sector.
    col = (p * 8) % N + (p * 8) // N
    for m0 in range(0, M, BLOCK):
        rows = m0 + tl.arange(0, BLOCK)
        mask = rows < M
        v = tl.load(x_ptr + rows.to(tl.int64) * N + col, mask=mask)  # strided by N
        tl.store(out_ptr + col.to(tl.int64) * M + rows, v, mask=mask)  # contiguous


@triton.jit
def transpose_tiles_kernel(x_ptr, out_ptr, M, N, TILE: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * TILE + tl.arange(0, TILE)
    rn = pn * TILE + tl.arange(0, TILE)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], mask=mask)
    tl.store(out_ptr + rn[:, None].to(tl.int64) * M + rm[None, :], tl.trans(tile), mask=tl.trans(mask))


def build_v0(inputs, p):
    x, out = inputs["x"], inputs["out"]
    M, N = p["M"], p["N"]
    grid = (N,)

    def run():
        return transpose_rows_kernel[grid](x, out, M, N, BLOCK=1024, num_warps=4)

    return Plan([Stage("transpose", run, kernel=transpose_rows_kernel, tiling={"BLOCK": 1024, "num_warps": 4},
                       grid_blocks=N)], output=lambda: out)


def build_v1(inputs, p):
    x, out = inputs["x"], inputs["out"]
    M, N = p["M"], p["N"]
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))

    def run():
        return transpose_tiles_kernel[grid](x, out, M, N, TILE=64, num_warps=8)

    return Plan([Stage("transpose", run, kernel=transpose_tiles_kernel, tiling={"TILE": 64, "num_warps": 8},
                       grid_blocks=grid[0] * grid[1])], output=lambda: out)
