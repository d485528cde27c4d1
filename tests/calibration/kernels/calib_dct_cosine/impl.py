"""Triton code of calib_dct_cosine (imported only by the profiling worker).

cosine_kernel (v0): one frame a program; for each 64-coefficient tile k and 64-sample chunk n, the tile
cos(pi * ((2n + 1) k mod 4N) / (2N)) (the angle reduced exactly in integers), times the samples, summed over n.
basis_kernel (v1): 64 frames a program, Y tile [64, 64] = X [64, N] @ C^T [N, 64] by tl.dot, N in chunks of 64.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BK, BN, BM, V0_WARPS, V1_WARPS = 64, 64, 64, 4, 4


@triton.jit
def cosine_kernel(x_ptr, o_ptr, N: tl.constexpr, BK: tl.constexpr, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * N
    for k0 in range(0, N, BK):
        k = k0 + tl.arange(0, BK)
        acc = tl.zeros([BK], dtype=tl.float32)
        for n0 in range(0, N, BN):
            n = n0 + tl.arange(0, BN)
            x = tl.load(x_ptr + row + n)
            idx = ((2 * n[None, :] + 1) * k[:, None]) & (4 * N - 1)
            c = tl.cos(idx.to(tl.float32) * (3.141592653589793 / (2 * N)))
            acc += tl.sum(c * x[None, :], axis=1)
        tl.store(o_ptr + row + k, acc)


@triton.jit
def basis_kernel(
    x_ptr, c_ptr, o_ptr, M, N: tl.constexpr, BM: tl.constexpr, BK: tl.constexpr, BN: tl.constexpr
):
    pm = tl.program_id(0)
    pk = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rk = pk * BK + tl.arange(0, BK)
    mmask = rm < M
    acc = tl.zeros([BM, BK], dtype=tl.float32)
    for n0 in range(0, N, BN):
        rn = n0 + tl.arange(0, BN)
        x = tl.load(x_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], mask=mmask[:, None], other=0.0)
        ct = tl.load(c_ptr + rk[None, :] * N + rn[:, None])  # C^T chunk [BN, BK]
        acc = tl.dot(x, ct, acc)
    tl.store(o_ptr + rm[:, None].to(tl.int64) * N + rk[None, :], acc, mask=mmask[:, None])


def build_v0(inputs, params):
    x, out = inputs["X"], inputs["out"]
    m, n = params["M"], params["N"]

    def run():
        return cosine_kernel[(m,)](x, out, N=n, BK=BK, BN=BN, num_warps=V0_WARPS)

    st = Stage(
        "dct_cosines", run, kernel=cosine_kernel, tiling={"BK": BK, "BN": BN, "grid": [m]}, grid_blocks=m
    )
    return Plan([st], output=lambda: out)


def build_v1(inputs, params):
    x, c, out = inputs["X"], inputs["C"], inputs["out"]
    m, n = params["M"], params["N"]
    grid = (triton.cdiv(m, BM), n // BK)

    def run():
        return basis_kernel[grid](x, c, out, m, N=n, BM=BM, BK=BK, BN=BN, num_warps=V1_WARPS)

    st = Stage(
        "dct_basis",
        run,
        kernel=basis_kernel,
        tiling={"BM": BM, "BK": BK, "BN": BN, "grid": list(grid)},
        grid_blocks=grid[0] * grid[1],
    )
    return Plan([st], output=lambda: out)
