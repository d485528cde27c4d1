"""Triton code of matmul (imported only by the profiling worker)."""

import triton
import triton.language as tl

from kprof_mcp.kernel_api import Plan, Stage
from kprof_mcp.kernel_runtime import autotune_bench


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    if GROUP_M == 1:
        # Row-major launch order: consecutive programs sweep a row of C tiles, so B is
        # re-read from DRAM by every row of programs.
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
    else:
        # Grouped order: GROUP_M rows of tiles are swept column by column, so the A and B
        # tiles in flight at once overlap and stay in L2.
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _configs():
    cfgs = []
    for bm, bn, bk, w, s in [
        (128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 8, 4), (128, 128, 64, 4, 4),
        (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 128, 32, 4, 4), (64, 64, 64, 4, 5),
    ]:
        cfgs.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                                  num_warps=w, num_stages=s))
    return cfgs


# cache_results: a re-run after a failed autotune starts from the cached best config.
matmul_kernel_tuned = triton.autotune(
    configs=_configs(), key=["M", "N", "K"], cache_results=True, do_bench=autotune_bench
)(matmul_kernel)

V0_TILING = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 1, "num_warps": 8, "num_stages": 3}


def _args(inputs, params):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    return (a, b, c, params["M"], params["N"], params["K"],
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def build_v0(inputs, params):
    args = _args(inputs, params)
    t = V0_TILING
    blocks = triton.cdiv(params["M"], t["BLOCK_M"]) * triton.cdiv(params["N"], t["BLOCK_N"])

    def run():
        return matmul_kernel[(blocks,)](*args, BLOCK_M=t["BLOCK_M"], BLOCK_N=t["BLOCK_N"], BLOCK_K=t["BLOCK_K"],
                                        GROUP_M=1, num_warps=t["num_warps"], num_stages=t["num_stages"])

    return Plan(stages=[Stage("matmul", run, kernel=matmul_kernel, tiling=dict(t), grid_blocks=blocks)],
                output=lambda: inputs["c"])


def build_v1(inputs, params):
    args = _args(inputs, params)
    M, N = params["M"], params["N"]

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

    def run():
        return matmul_kernel_tuned[grid](*args)

    def blocks():
        cfg = getattr(matmul_kernel_tuned, "best_config", None)
        return grid(cfg.kwargs)[0] if cfg is not None else None

    return Plan(stages=[Stage("matmul", run, kernel=matmul_kernel_tuned, grid_blocks=blocks)],
                output=lambda: inputs["c"])
