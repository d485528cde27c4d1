"""Triton code of calib_matpow (imported only by the profiling worker).

matmul_kernel: C = A·B for square N x N operands, one program per 128x128 tile of C in grouped order
(GROUP_M tile rows at a time, as Triton's matmul tutorial orders them), fp32 accumulation, C stored in the
operands' dtype.

v0: fifteen launches: b0 = P·P, b1 = b0·P, b0 = b1·P, ... (the last, the 15th, into b0);
v1: four launches: b0 = P·P, b1 = b0·b0, b0 = b1·b1, b1 = b0·b0 (P^16 in b1).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

TILING = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    N,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_m = tl.cdiv(N, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_n
    first_m = (pid // in_group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % in_group) % size_m)
    pid_n = (pid % in_group) // size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None].to(tl.int64) * N + offs_k[None, :])
    b_ptrs = b_ptr + (offs_k[:, None].to(tl.int64) * N + offs_n[None, :])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(N, BLOCK_K)):
        k_left = N - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < N) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < N) & (offs_n[None, :] < N))


def _stage(name, a, b, c, n):
    t = TILING
    programs = triton.cdiv(n, t["BLOCK_M"]) * triton.cdiv(n, t["BLOCK_N"])

    def run():
        return matmul_kernel[(programs,)](
            a,
            b,
            c,
            n,
            BLOCK_M=t["BLOCK_M"],
            BLOCK_N=t["BLOCK_N"],
            BLOCK_K=t["BLOCK_K"],
            GROUP_M=t["GROUP_M"],
            num_warps=t["num_warps"],
            num_stages=t["num_stages"],
        )

    return Stage(name, run, kernel=matmul_kernel, tiling=dict(t, grid=[programs]), grid_blocks=programs)


def build_v0(inputs, params):
    p, bufs, n = inputs["p"], (inputs["b0"], inputs["b1"]), params["N"]
    stages = [_stage("mul01", p, p, bufs[0], n)]
    for j in range(2, 16):  # C(j) = C(j-1)·P, into the buffer C(j-1) is not in
        stages.append(_stage(f"mul{j:02d}", bufs[j % 2], p, bufs[(j + 1) % 2], n))
    return Plan(stages, output=lambda: bufs[0])  # the 15th product is in b0


def build_v1(inputs, params):
    p, b0, b1, n = inputs["p"], inputs["b0"], inputs["b1"], params["N"]
    stages = [
        _stage("sq1", p, p, b0, n),
        _stage("sq2", b0, b0, b1, n),
        _stage("sq3", b1, b1, b0, n),
        _stage("sq4", b0, b0, b1, n),
    ]
    return Plan(stages, output=lambda: b1)
