"""Triton code of calib_global_acc (imported only by the profiling worker).

One kernel for both versions (tiles in grouped order, GROUP_M = 8), the accumulation chosen by a
constexpr:

    v0: ACC_IN_MEMORY=True: D's tile initialised from C, then at every K step
        D_tile = load(D_tile) + dot(a, b), stored, a CTA barrier;
    v1: ACC_IN_MEMORY=False: acc = load(C_tile); acc = dot(a, b, acc) per K step; D stored once.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

TILE = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}


@triton.jit
def gemm_acc_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    d_ptr,
    M,
    N,
    K,
    ACC_IN_MEMORY: tl.constexpr,
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
    b_ptrs = b_ptr + rk[:, None].to(tl.int64) * N + rn[None, :]
    cd_offs = rm[:, None].to(tl.int64) * N + rn[None, :]
    cd_mask = (rm[:, None] < M) & (rn[None, :] < N)

    if ACC_IN_MEMORY:
        tl.store(d_ptr + cd_offs, tl.load(c_ptr + cd_offs, mask=cd_mask, other=0.0), mask=cd_mask)
        tl.debug_barrier()
    else:
        acc = tl.load(c_ptr + cd_offs, mask=cd_mask, other=0.0)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        if ACC_IN_MEMORY:
            part = tl.dot(a, b)
            prev = tl.load(d_ptr + cd_offs, mask=cd_mask, other=0.0)
            tl.store(d_ptr + cd_offs, prev + part, mask=cd_mask)
            tl.debug_barrier()
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    if not ACC_IN_MEMORY:
        tl.store(d_ptr + cd_offs, acc, mask=cd_mask)


def _build(inputs, p, in_memory):
    a, b, c, d = inputs["a"], inputs["b"], inputs["c"], inputs["d"]
    m, k = a.shape
    n = b.shape[1]
    t = dict(TILE)
    programs = triton.cdiv(m, t["BLOCK_M"]) * triton.cdiv(n, t["BLOCK_N"])
    tiling = dict(t, ACC_IN_MEMORY=in_memory, grid=[programs])

    def run():
        return gemm_acc_kernel[(programs,)](a, b, c, d, m, n, k, ACC_IN_MEMORY=in_memory, **t)

    return Plan(
        [Stage("gemm_acc", run, kernel=gemm_acc_kernel, tiling=tiling, grid_blocks=programs)],
        output=lambda: d,
    )


def build_v0(inputs, p):
    return _build(inputs, p, True)


def build_v1(inputs, p):
    return _build(inputs, p, False)
