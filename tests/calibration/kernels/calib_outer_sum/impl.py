"""Triton code of calib_outer_sum (imported only by the profiling worker).

One kernel for both versions: a tiled GEMM, C = A @ B (fp16 operands, fp32 accumulation, fp16
C), one program per BLOCK_M x BLOCK_N tile of C in grouped launch order, a K loop over
BLOCK_K-wide slices. The constexpr ``USE_DOT`` picks how a slice's product is accumulated:

    v0 (USE_DOT=False): the tiles loaded as [BLOCK_M, BLOCK_K, 1] and [1, BLOCK_K, BLOCK_N],
        converted to fp32, multiplied with broadcasting and summed over K (``tl.sum(..., axis=1)``):
        the outer products spelled out (Triton 3.6 on an H100 reduces them across threads through
        shared memory, with spills: see the package's docstring). (Written
        as ``tl.sum(a[:, :, None] * b[None, :, :], axis=1)`` on 2-d tiles, Triton 3.6's combine pass
        recognises the pattern and emits a dot, fp32 operands on the tensor cores as TF32: recorded
        on the H100, 2026-11-25. The 3-d loads keep the written form: the pattern wants the
        broadcast operands to come from expand_dims.)
    v1 (USE_DOT=True): ``tl.dot(a, b, acc)``: fp16 MMA on the tensor cores, fp32 accumulation.

Same tiles, warps, stages, grid and loads in both.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

TILING = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 16, "GROUP_M": 8, "num_warps": 8, "num_stages": 2}


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr, USE_DOT: tl.constexpr):
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
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if USE_DOT:
        a_ptrs = a_ptr + (offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None].to(tl.int64) * stride_bk + offs_n[None, :] * stride_bn)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
    else:
        # The same tiles, loaded as [BLOCK_M, BLOCK_K, 1] and [1, BLOCK_K, BLOCK_N] (the loads are
        # the same bytes and vectors as above): the outer products of each K slice, summed over K.
        m3 = offs_m[:, None, None]
        k3 = offs_k[None, :, None]
        n3 = offs_n[None, None, :]
        a_ptrs = a_ptr + (m3.to(tl.int64) * stride_am + k3 * stride_ak)
        b_ptrs = b_ptr + (k3.to(tl.int64) * stride_bk + n3 * stride_bn)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=(m3 < M) & (k3 < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(k3 < k_left) & (n3 < N), other=0.0)
            acc += tl.sum(a.to(tl.float32) * b.to(tl.float32), axis=1)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def build(inputs, params, use_dot):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    M, N, K = params["M"], params["N"], params["K"]
    t = TILING
    programs = triton.cdiv(M, t["BLOCK_M"]) * triton.cdiv(N, t["BLOCK_N"])
    tiling = dict(t, use_dot=use_dot, programs=programs)

    def run():
        return gemm_kernel[(programs,)](
            a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=t["BLOCK_M"], BLOCK_N=t["BLOCK_N"], BLOCK_K=t["BLOCK_K"], GROUP_M=t["GROUP_M"],
            USE_DOT=use_dot, num_warps=t["num_warps"], num_stages=t["num_stages"])

    return Plan(stages=[Stage("gemm", run, kernel=gemm_kernel, tiling=tiling, grid_blocks=programs)],
                output=lambda: c)


def build_v0(inputs, params):
    return build(inputs, params, False)


def build_v1(inputs, params):
    return build(inputs, params, True)
