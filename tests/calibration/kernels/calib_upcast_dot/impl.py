"""Triton code of calib_upcast_dot (imported only by the profiling worker).

One tiled GEMM kernel for both versions (tl.dot, fp32 accumulation, 128x128x64 tiles, 8 warps,
3 stages, grouped launch order GROUP_M = 8); the versions differ in one flag:

    v0: UPCAST: the bf16 tiles converted to float32 after loading, so tl.dot multiplies fp32
        operands (TF32 MMAs, Triton's default input_precision for float32);
    v1: the bf16 tiles fed to tl.dot as loaded (bf16 MMAs, fp32 accumulation).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BASE = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}
V0 = dict(BASE, UPCAST=True)  # planted: operands upcast to fp32 before the dot (TF32 MMAs)
V1 = dict(BASE, UPCAST=False)  # fix: bf16 operands (fp32 accumulation all the same)


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    UPCAST: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # C [M, N] = A [M, K] @ B [K, N], all row-major; programs ordered in groups of GROUP_M row blocks
    # (GROUP_M = 1: row-major order over the output tiles).
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _build(inputs, p, tiling):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    m, k = a.shape
    n = b.shape[1]
    t = tiling
    programs = triton.cdiv(m, t["BLOCK_M"]) * triton.cdiv(n, t["BLOCK_N"])

    def run():
        return matmul_kernel[(programs,)](
            a,
            b,
            c,
            m,
            n,
            k,
            UPCAST=t["UPCAST"],
            BLOCK_M=t["BLOCK_M"],
            BLOCK_N=t["BLOCK_N"],
            BLOCK_K=t["BLOCK_K"],
            GROUP_M=t["GROUP_M"],
            num_warps=t["num_warps"],
            num_stages=t["num_stages"],
        )

    return Plan(
        [Stage("matmul", run, kernel=matmul_kernel, tiling=dict(t, programs=programs), grid_blocks=programs)],
        output=lambda: c,
    )


def build_v0(inputs, p):
    return _build(inputs, p, V0)


def build_v1(inputs, p):
    return _build(inputs, p, V1)
