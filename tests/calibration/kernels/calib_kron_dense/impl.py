"""Triton code of calib_kron_dense (imported only by the profiling worker).

dense_kernel: out = X · Kᵀ, a GEMM with tiles BM x BN x BK = 64 x 64 x 64 (4 warps, 4 stages), grid
(cdiv(n², BN), cdiv(batch, BM)); K row-major [n², n²] (its rows are the output columns).
vec_kernel: one program per (vector b, block of BI output rows): T = A[rows, :] · X_b (fp32, rounded to
fp16), out_b[rows, :] = T · Bᵀ; X_b the [n, n] row-major view of vector b.

v0: dense; v1: vec_kernel.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BM, BN, BK, WARPS, STAGES = 64, 64, 64, 4, 4


@triton.jit
def dense_kernel(x_ptr, k_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pn = tl.program_id(0)
    pm = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, N, BK):
        a = tl.load(
            x_ptr + rm[:, None].to(tl.int64) * N + (k0 + rk)[None, :], mask=rm[:, None] < M, other=0.0
        )
        b = tl.load(k_ptr + rn[None, :].to(tl.int64) * N + (k0 + rk)[:, None])  # Kᵀ tile [BK, BN]
        acc = tl.dot(a, b, acc)
    tl.store(out_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], acc.to(tl.float16), mask=rm[:, None] < M)


@triton.jit
def vec_kernel(a_ptr, b_ptr, x_ptr, out_ptr, n: tl.constexpr, BI: tl.constexpr):
    vb = tl.program_id(0).to(tl.int64)
    ri = tl.program_id(1) * BI + tl.arange(0, BI)
    rj = tl.arange(0, n)
    a = tl.load(a_ptr + ri[:, None] * n + rj[None, :])  # A[rows, :] [BI, n]
    xb = tl.load(x_ptr + vb * n * n + rj[:, None] * n + rj[None, :])  # X_b [n, n]
    t = tl.dot(a, xb).to(tl.float16)
    bt = tl.load(b_ptr + rj[None, :] * n + rj[:, None])  # Bᵀ [n, n]
    y = tl.dot(t, bt)
    tl.store(out_ptr + vb * n * n + ri[:, None] * n + rj[None, :], y.to(tl.float16))


def build_v0(inputs, params):
    x, kmat, out = inputs["X"], inputs["K"], inputs["out"]
    m, n2 = params["batch"], params["n"] ** 2
    grid = (triton.cdiv(n2, BN), triton.cdiv(m, BM))

    def run():
        return dense_kernel[grid](
            x, kmat, out, m, n2, BM=BM, BN=BN, BK=BK, num_warps=WARPS, num_stages=STAGES
        )

    tiling = {"BM": BM, "BN": BN, "BK": BK, "num_warps": WARPS, "num_stages": STAGES, "grid": list(grid)}
    stage = Stage("dense", run, kernel=dense_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])
    return Plan([stage], output=lambda: out)


def build_v1(inputs, params):
    a, bm, x, out = inputs["A"], inputs["B"], inputs["X"], inputs["out"]
    n = params["n"]
    bi = min(64, n)
    grid = (params["batch"], n // bi)

    def run():
        return vec_kernel[grid](a, bm, x, out, n=n, BI=bi, num_warps=WARPS)

    tiling = {"BI": bi, "n": n, "num_warps": WARPS, "grid": list(grid)}
    stage = Stage("vec_trick", run, kernel=vec_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])
    return Plan([stage], output=lambda: out)
