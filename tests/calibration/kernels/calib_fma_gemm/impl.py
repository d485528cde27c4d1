"""Triton code of calib_fma_gemm (imported only by the profiling worker).

One kernel for both versions: a tiled fp32 GEMM, C = A @ B, one program per BLOCK_M x BLOCK_N
tile of C in grouped launch order (GROUP_M rows of tiles swept column by column, so the A and B
tiles in flight at once stay in L2), a K loop of ``tl.dot``. The versions differ only in the
constexpr ``PRECISION`` passed to ``tl.dot(..., input_precision=PRECISION)``:

    v0: "ieee" -> an exact fp32 product: Triton lowers the dot to FMA instructions on the
        SIMT FP32 pipes (no tensor-core instruction in the SASS: no HMMA/HGMMA);
    v1: "tf32" -> operands rounded to TF32 and multiplied on the tensor cores (wgmma on Hopper),
        accumulated in fp32.

Same tiles, warps, stages, grid and loads in both.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

TILING = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}
V0_PRECISION = "ieee"
V1_PRECISION = "tf32"


@triton.jit
def fp32_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                     stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr, PRECISION: tl.constexpr):
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
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def build(inputs, params, precision):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    M, N, K = params["M"], params["N"], params["K"]
    t = TILING
    programs = triton.cdiv(M, t["BLOCK_M"]) * triton.cdiv(N, t["BLOCK_N"])
    tiling = dict(t, input_precision=precision, programs=programs)

    def run():
        return fp32_gemm_kernel[(programs,)](
            a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=t["BLOCK_M"], BLOCK_N=t["BLOCK_N"], BLOCK_K=t["BLOCK_K"], GROUP_M=t["GROUP_M"],
            PRECISION=precision, num_warps=t["num_warps"], num_stages=t["num_stages"])

    return Plan(stages=[Stage("gemm", run, kernel=fp32_gemm_kernel, tiling=tiling, grid_blocks=programs)],
                output=lambda: c)


def build_v0(inputs, params):
    return build(inputs, params, V0_PRECISION)


def build_v1(inputs, params):
    return build(inputs, params, V1_PRECISION)
