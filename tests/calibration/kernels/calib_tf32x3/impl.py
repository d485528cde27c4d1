"""Triton code of calib_tf32x3 (imported only by the profiling worker).

C = A @ W^T with W stored [N, K] (nn.Linear's layout): both operands K-major, as TF32 wgmma reads them.

One kernel for both versions (tiles in grouped order, GROUP_M = 8), the dot's input precision chosen by a
constexpr:

    v0: PRECISION = "tf32x3" (error-compensated: three TF32 MMAs per product);
    v1: PRECISION = "tf32".
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

TILE = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}


@triton.jit
def gemm_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows_in_group
    pid_n = (pid % per_group) // rows_in_group

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None].to(tl.int64) * K + rk[None, :]
    b_ptrs = b_ptr + rn[None, :].to(tl.int64) * K + rk[:, None]  # W is [N, K]: the tile read K-major
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    c_offs = rm[:, None].to(tl.int64) * N + rn[None, :]
    tl.store(c_ptr + c_offs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _build(inputs, p, precision):
    a, b, c = inputs["a"], inputs["w"], inputs["c"]
    m, k = a.shape
    n = b.shape[0]
    t = dict(TILE)
    programs = triton.cdiv(m, t["BLOCK_M"]) * triton.cdiv(n, t["BLOCK_N"])
    tiling = dict(t, PRECISION=precision, grid=[programs])

    def run():
        return gemm_kernel[(programs,)](a, b, c, m, n, k, PRECISION=precision, **t)

    return Plan(
        [Stage("gemm", run, kernel=gemm_kernel, tiling=tiling, grid_blocks=programs)],
        output=lambda: c,
    )


def build_v0(inputs, p):
    return _build(inputs, p, "tf32x3")


def build_v1(inputs, p):
    return _build(inputs, p, "tf32")
