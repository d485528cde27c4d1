"""Triton code of calib_pairwise_dist (imported only by the profiling worker).

direct_kernel (v0): one program per 128x128 tile of out (8 warps); for k in 0..D-1: xk = xT[k, tile rows],
    yk = yT[k, tile columns] (fp32), acc += (xk[:, None] - yk[None, :])^2; out = acc.
expansion_kernel (v1): the same tiling; for K blocks of 64: a = xT[kb, rows] (fp16, [64, 128]), b = yT[kb,
    cols]; acc += tl.dot(trans(a), b) (fp32 accumulation); the squared norms of the rows and columns summed
    from the same tiles (fp32); out = max(nx[:, None] + ny[None, :] - 2 acc, 0).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BM, BN, BK, WARPS = 128, 128, 64, 8


@triton.jit
def direct_kernel(xt_ptr, yt_ptr, out_ptr, M, N, D, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    m_ok = rm < M
    n_ok = rn < N
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, D):
        xk = tl.load(xt_ptr + k * M + rm, mask=m_ok, other=0.0).to(tl.float32)
        yk = tl.load(yt_ptr + k * N + rn, mask=n_ok, other=0.0).to(tl.float32)
        diff = xk[:, None] - yk[None, :]
        acc += diff * diff
    ptrs = out_ptr + rm[:, None].to(tl.int64) * N + rn[None, :]
    tl.store(ptrs, acc, mask=m_ok[:, None] & n_ok[None, :])


@triton.jit
def expansion_kernel(xt_ptr, yt_ptr, out_ptr, M, N, D, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    m_ok = rm < M
    n_ok = rn < N
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    nx = tl.zeros((BM,), dtype=tl.float32)
    ny = tl.zeros((BN,), dtype=tl.float32)
    for k0 in range(0, D, BK):
        k_ok = (k0 + rk) < D
        a = tl.load(
            xt_ptr + (k0 + rk)[:, None] * M + rm[None, :], mask=k_ok[:, None] & m_ok[None, :], other=0.0
        )
        b = tl.load(
            yt_ptr + (k0 + rk)[:, None] * N + rn[None, :], mask=k_ok[:, None] & n_ok[None, :], other=0.0
        )
        acc = tl.dot(tl.trans(a), b, acc)
        af = a.to(tl.float32)
        bf = b.to(tl.float32)
        nx += tl.sum(af * af, axis=0)
        ny += tl.sum(bf * bf, axis=0)
    d2 = tl.maximum(nx[:, None] + ny[None, :] - 2.0 * acc, 0.0)
    ptrs = out_ptr + rm[:, None].to(tl.int64) * N + rn[None, :]
    tl.store(ptrs, d2, mask=m_ok[:, None] & n_ok[None, :])


def _grid(p):
    return (triton.cdiv(p["M"], BM), triton.cdiv(p["N"], BN))


def build_v0(inputs, params):
    xt, yt, out = inputs["xT"], inputs["yT"], inputs["out"]
    m, n, d = params["M"], params["N"], params["D"]
    grid = _grid(params)

    def run():
        return direct_kernel[grid](xt, yt, out, m, n, d, BM=BM, BN=BN, num_warps=WARPS)

    tiling = {"BLOCK_M": BM, "BLOCK_N": BN, "num_warps": WARPS, "grid": list(grid)}
    return Plan(
        [Stage("direct", run, kernel=direct_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])],
        output=lambda: out,
    )


def build_v1(inputs, params):
    xt, yt, out = inputs["xT"], inputs["yT"], inputs["out"]
    m, n, d = params["M"], params["N"], params["D"]
    grid = _grid(params)

    def run():
        return expansion_kernel[grid](
            xt, yt, out, m, n, d, BM=BM, BN=BN, BK=BK, num_warps=WARPS, num_stages=3
        )

    tiling = {
        "BLOCK_M": BM,
        "BLOCK_N": BN,
        "BLOCK_K": BK,
        "num_warps": WARPS,
        "num_stages": 3,
        "grid": list(grid),
    }
    return Plan(
        [Stage("expansion", run, kernel=expansion_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])],
        output=lambda: out,
    )
