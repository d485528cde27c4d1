"""Triton code of calib_needless_splitk (imported only by the profiling worker).

One GEMM kernel for both versions (128x128x64 tiles, 8 warps, 3 stages, grouped order GROUP_M = 8),
grid (tiles, SPLIT): program (t, s) multiplies its tile over K slice s (K_PER = cdiv(K, SPLIT) rounded
up to BLOCK_K) and, with PARTIAL, stores the fp32 tile to W[s]; without, casts it and stores it to C.

    v0: gemm_kernel(PARTIAL=True, SPLIT=SPLIT_K), then reduce_kernel (C = sum over s of W[s], 4096
        values a program);
    v1: gemm_kernel(PARTIAL=False, SPLIT=1).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

TILING = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}
RED_BLOCK = 4096


@triton.jit
def gemm_kernel(
    a_ptr,
    b_ptr,
    w_ptr,
    c_ptr,
    M,
    N,
    K,
    K_PER,
    PARTIAL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    s = tl.program_id(axis=1)
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
    k0 = s * K_PER
    k_end = min(K, k0 + K_PER)
    offs_k = k0 + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None].to(tl.int64) * K + offs_k[None, :])
    b_ptrs = b_ptr + (offs_k[:, None].to(tl.int64) * N + offs_n[None, :])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(k_end - k0, BLOCK_K)):
        k_left = k_end - k0 - k * BLOCK_K
        kk = tl.arange(0, BLOCK_K)
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (kk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(kk[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if PARTIAL:
        w_ptrs = w_ptr + s.to(tl.int64) * M * N + offs_m[:, None].to(tl.int64) * N + offs_n[None, :]
        tl.store(w_ptrs, acc, mask=mask)
    else:
        c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :]
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def reduce_kernel(w_ptr, c_ptr, total, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    acc = tl.zeros([BLOCK], tl.float32)
    for s in tl.static_range(SPLIT):
        acc += tl.load(w_ptr + s * total + offs, mask=mask, other=0.0)
    tl.store(c_ptr + offs, acc.to(c_ptr.dtype.element_ty), mask=mask)


def _gemm_stage(name, inputs, params, split):
    a, b, w, c = inputs["a"], inputs["b"], inputs["w"], inputs["c"]
    m, n, k = params["M"], params["N"], params["K"]
    t = TILING
    k_per = triton.cdiv(triton.cdiv(k, split), t["BLOCK_K"]) * t["BLOCK_K"]
    split = triton.cdiv(k, k_per)  # slices that hold any of K
    tiles = triton.cdiv(m, t["BLOCK_M"]) * triton.cdiv(n, t["BLOCK_N"])
    partial = name == "partial"

    def run():
        return gemm_kernel[(tiles, split)](
            a,
            b,
            w,
            c,
            m,
            n,
            k,
            k_per,
            PARTIAL=partial,
            BLOCK_M=t["BLOCK_M"],
            BLOCK_N=t["BLOCK_N"],
            BLOCK_K=t["BLOCK_K"],
            GROUP_M=t["GROUP_M"],
            num_warps=t["num_warps"],
            num_stages=t["num_stages"],
        )

    tiling = dict(t, SPLIT_K=split, K_PER=k_per, grid=[tiles, split])
    return Stage(name, run, kernel=gemm_kernel, tiling=tiling, grid_blocks=tiles * split), split


def build_v0(inputs, params):
    stage, split = _gemm_stage("partial", inputs, params, params["SPLIT_K"])
    w, c = inputs["w"], inputs["c"]
    total = params["M"] * params["N"]
    blocks = triton.cdiv(total, RED_BLOCK)

    def red():
        return reduce_kernel[(blocks,)](w, c, total, SPLIT=split, BLOCK=RED_BLOCK, num_warps=8)

    return Plan(
        [
            stage,
            Stage(
                "reduce",
                red,
                kernel=reduce_kernel,
                tiling={"BLOCK": RED_BLOCK, "SPLIT": split, "num_warps": 8, "grid": [blocks]},
                grid_blocks=blocks,
            ),
        ],
        output=lambda: inputs["c"],
    )


def build_v1(inputs, params):
    stage, _ = _gemm_stage("mm", inputs, params, 1)
    return Plan([stage], output=lambda: inputs["c"])
