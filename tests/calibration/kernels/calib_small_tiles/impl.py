"""Triton code of calib_small_tiles (imported only by the profiling worker).

One kernel for both versions: a tiled GEMM C = A @ B (fp16/bf16 operands, fp32 accumulation,
C in the input dtype), one program per BLOCK_M x BLOCK_N tile of C in grouped launch order
(GROUP_M = 8 in both, so the L2 locality of the launch order is the same), a K loop of plain
``tl.dot``. The versions differ only in the launch constants:

    v0: BLOCK 32 x 32 x 32, num_warps=2, num_stages=1  (small tiles, no software pipelining)
    v1: BLOCK 128 x 128 x 64, num_warps=8, num_stages=3

Operand bytes loaded per FLOP of a tile: (BM + BN)·BK·2 B / (2·BM·BN·BK) = (BM + BN) / (BM·BN):
1/16 B/FLOP for 32x32, 1/64 for 128x128: v0 moves 4x the L2->SM operand bytes of v1 for the
same FLOPs, and with num_stages=1 each program waits for every tile's loads before its MMAs.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

V0_TILING = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 2, "num_stages": 1}
V1_TILING = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}


@triton.jit
def tiled_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                      stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None].to(tl.int64) * stride_bk + offs_n[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def build(inputs, params, t):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    M, N, K = params["M"], params["N"], params["K"]
    programs = triton.cdiv(M, t["BLOCK_M"]) * triton.cdiv(N, t["BLOCK_N"])
    tiling = dict(t, programs=programs,
                  operand_bytes_per_flop=(t["BLOCK_M"] + t["BLOCK_N"]) / (t["BLOCK_M"] * t["BLOCK_N"]))

    def run():
        return tiled_gemm_kernel[(programs,)](
            a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=t["BLOCK_M"], BLOCK_N=t["BLOCK_N"], BLOCK_K=t["BLOCK_K"], GROUP_M=t["GROUP_M"],
            num_warps=t["num_warps"], num_stages=t["num_stages"])

    return Plan(stages=[Stage("gemm", run, kernel=tiled_gemm_kernel, tiling=tiling, grid_blocks=programs)],
                output=lambda: c)


def build_v0(inputs, params):
    return build(inputs, params, V0_TILING)


def build_v1(inputs, params):
    return build(inputs, params, V1_TILING)
