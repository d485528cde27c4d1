"""Triton code of calib_blockdiag (imported only by the profiling worker).

gemm_kernel: program (t, g) one [BM, BN] tile of C_g = A_g · B_g over the whole of K in steps of BK (tl.dot, fp32
accumulator, stored as fp16), where A_g = a + g·a_goff (row stride lda), B_g = b + g·b_goff (row stride ldb),
C_g = c + g·c_goff (row stride ldc). v0: one group, A = X, B = the block-diagonal [G D, G D] weight, K = G D.
v1: G groups, A_g = X's g-th column slice, B_g = W_g [D, D], K = D.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BM, BN, BK, WARPS, STAGES = 128, 128, 64, 8, 3


@triton.jit
def gemm_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    lda,
    ldb,
    ldc,
    a_goff,
    b_goff,
    c_goff,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    pid = tl.program_id(0)
    g = tl.program_id(1).to(tl.int64)
    a_ptr += g * a_goff
    b_ptr += g * b_goff
    c_ptr += g * c_goff
    tiles_n = tl.cdiv(N, BN)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(
            a_ptr + rm[:, None].to(tl.int64) * lda + (k0 + rk)[None, :],
            mask=(rm[:, None] < M) & (k0 + rk < K)[None, :],
            other=0.0,
        )
        b = tl.load(
            b_ptr + (k0 + rk)[:, None] * ldb + rn[None, :],
            mask=(k0 + rk < K)[:, None] & (rn[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(a, b, acc)
    c = acc.to(tl.float16)
    tl.store(
        c_ptr + rm[:, None].to(tl.int64) * ldc + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N)
    )


def _stage(name, a, b, c, m, n, k, lda, ldb, ldc, groups, a_goff, b_goff, c_goff):
    grid = (triton.cdiv(m, BM) * triton.cdiv(n, BN), groups)

    def run():
        return gemm_kernel[grid](
            a,
            b,
            c,
            m,
            n,
            k,
            lda,
            ldb,
            ldc,
            a_goff,
            b_goff,
            c_goff,
            BM=BM,
            BN=BN,
            BK=BK,
            num_warps=WARPS,
            num_stages=STAGES,
        )

    tiling = {"BM": BM, "BN": BN, "BK": BK, "num_warps": WARPS, "num_stages": STAGES, "grid": list(grid)}
    return Stage(name, run, kernel=gemm_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])


def build_v0(inputs, params):
    x, w, out = inputs["X"], inputs["Wbd"], inputs["out"]
    m, g, d = params["M"], params["G"], params["D"]
    k = g * d
    return Plan([_stage("gemm_dense", x, w, out, m, k, k, k, k, k, 1, 0, 0, 0)], output=lambda: out)


def build_v1(inputs, params):
    x, w, out = inputs["X"], inputs["Wg"], inputs["out"]
    m, g, d = params["M"], params["G"], params["D"]
    k = g * d
    return Plan([_stage("gemm_grouped", x, w, out, m, d, d, k, d, k, g, d, d * d, d)], output=lambda: out)
