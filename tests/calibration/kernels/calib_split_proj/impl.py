"""Triton code of calib_split_proj (imported only by the profiling worker).

matmul_kernel: one program a [BM, BN] tile of C = A · B (A [M, K], B [K, N] row-major with row stride ldb), C's
tile stored at c_ptr with row stride ldc; a loop over the whole of K in steps of BK (tl.dot, fp32 accumulator).
v0 launches it three times (B = Wq, Wk, Wv; C = out's three column blocks), v1 once (B = W [K, 3N], C = out).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BM, BN, BK, WARPS, STAGES = 128, 128, 64, 8, 3


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, ldb, ldc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(
            a_ptr + rm[:, None] * K + (k0 + rk)[None, :],
            mask=(rm[:, None] < M) & (k0 + rk < K)[None, :],
            other=0.0,
        )
        b = tl.load(
            b_ptr + (k0 + rk)[:, None] * ldb + rn[None, :],
            mask=(k0 + rk < K)[:, None] & (rn[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * ldc + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _stage(name, a, b, c, m, n, k, ldb, ldc):
    grid = (triton.cdiv(m, BM) * triton.cdiv(n, BN),)

    def run():
        return matmul_kernel[grid](
            a, b, c, m, n, k, ldb, ldc, BM=BM, BN=BN, BK=BK, num_warps=WARPS, num_stages=STAGES
        )

    tiling = {"BM": BM, "BN": BN, "BK": BK, "num_warps": WARPS, "num_stages": STAGES, "grid": list(grid)}
    return Stage(name, run, kernel=matmul_kernel, tiling=tiling, grid_blocks=grid[0])


def build_v0(inputs, params):
    x, out = inputs["X"], inputs["out"]
    m, n, k = params["M"], params["N"], params["K"]
    stages = [
        _stage(name, x, inputs[w], out[:, i * n :], m, n, k, n, 3 * n)
        for i, (name, w) in enumerate((("proj_q", "Wq"), ("proj_k", "Wk"), ("proj_v", "Wv")))
    ]
    return Plan(stages, output=lambda: out)


def build_v1(inputs, params):
    x, w, out = inputs["X"], inputs["W"], inputs["out"]
    m, n, k = params["M"], params["N"], params["K"]
    return Plan([_stage("proj_qkv", x, w, out, m, 3 * n, k, 3 * n, 3 * n)], output=lambda: out)
