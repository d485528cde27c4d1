"""Triton code of calib_zeroed_out (imported only by the profiling worker).

fill_kernel: grid cdiv(N·M, 4096), 4 warps: D[:] = 0 (what torch.zeros / .zero_() launch);
dist_kernel: grid (cdiv(N, 32), cdiv(M, 256)), 4 warps: the tile's points loaded once (three
    coordinates each), D[i, j] = (p_i - q_j)·(p_i - q_j) in fp32, one masked store of the tile.

v0: fill_kernel, then dist_kernel; v1: dist_kernel alone.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BM, BN, FILL_BLOCK, WARPS = 32, 256, 4096, 4


@triton.jit
def fill_kernel(d_ptr, total, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(d_ptr + offs, tl.zeros([BLOCK], tl.float32), mask=offs < total)


@triton.jit
def dist_kernel(p_ptr, q_ptr, d_ptr, N, M, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    rm, cm = rows < N, cols < M
    px = tl.load(p_ptr + rows * 3, mask=rm, other=0.0).to(tl.float32)
    py = tl.load(p_ptr + rows * 3 + 1, mask=rm, other=0.0).to(tl.float32)
    pz = tl.load(p_ptr + rows * 3 + 2, mask=rm, other=0.0).to(tl.float32)
    qx = tl.load(q_ptr + cols * 3, mask=cm, other=0.0).to(tl.float32)
    qy = tl.load(q_ptr + cols * 3 + 1, mask=cm, other=0.0).to(tl.float32)
    qz = tl.load(q_ptr + cols * 3 + 2, mask=cm, other=0.0).to(tl.float32)
    dx = px[:, None] - qx[None, :]
    dy = py[:, None] - qy[None, :]
    dz = pz[:, None] - qz[None, :]
    d = dx * dx + dy * dy + dz * dz
    ptrs = d_ptr + rows[:, None].to(tl.int64) * M + cols[None, :]
    tl.store(ptrs, d, mask=rm[:, None] & cm[None, :])


def _dist_stage(inputs, params):
    p, q, d = inputs["p"], inputs["q"], inputs["d"]
    n, m = params["N"], params["M"]
    grid = (triton.cdiv(n, BM), triton.cdiv(m, BN))

    def run():
        return dist_kernel[grid](p, q, d, n, m, BM=BM, BN=BN, num_warps=WARPS)

    tiling = {"BM": BM, "BN": BN, "num_warps": WARPS, "grid": list(grid)}
    return Stage("dist", run, kernel=dist_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])


def build_v0(inputs, params):
    d = inputs["d"]
    total = params["N"] * params["M"]
    blocks = triton.cdiv(total, FILL_BLOCK)

    def zero():
        return fill_kernel[(blocks,)](d, total, BLOCK=FILL_BLOCK, num_warps=WARPS)

    return Plan(
        [
            Stage(
                "zero",
                zero,
                kernel=fill_kernel,
                tiling={"BLOCK": FILL_BLOCK, "num_warps": WARPS, "grid": [blocks]},
                grid_blocks=blocks,
            ),
            _dist_stage(inputs, params),
        ],
        output=lambda: d,
    )


def build_v1(inputs, params):
    return Plan([_dist_stage(inputs, params)], output=lambda: inputs["d"])
