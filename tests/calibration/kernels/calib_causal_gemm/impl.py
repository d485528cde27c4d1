"""Triton code of calib_causal_gemm (imported only by the profiling worker).

One kernel for both versions: a tiled GEMM Y = P @ V, one program per BLOCK_M x BLOCK_N tile of Y
in grouped launch order (GROUP_M = 8) with the row blocks taken from the last (the heaviest once
the loop is causal) to the first, the same order in both. The constexpr ``CAUSAL`` sets the K
loop's end:

    v0 (CAUSAL=False): all N columns of P (the zero tiles above the diagonal included);
    v1 (CAUSAL=True): columns 0 .. (pid_m + 1) * BLOCK_M - 1, the last block holding the diagonal.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

TILING = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}


@triton.jit
def causal_pv_kernel(
    p_ptr,
    v_ptr,
    y_ptr,
    N,
    D,
    CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(N, BLOCK_M)
    num_pid_n = tl.cdiv(D, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = num_pid_m - 1 - (first_pid_m + ((pid % num_pid_in_group) % group_size_m))
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    p_ptrs = p_ptr + (offs_m[:, None].to(tl.int64) * N + offs_k[None, :])
    v_ptrs = v_ptr + (offs_k[:, None].to(tl.int64) * D + offs_n[None, :])
    if CAUSAL:
        k_end = min(N, (pid_m + 1) * BLOCK_M)
    else:
        k_end = N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(k_end, BLOCK_K)):
        k_left = N - k * BLOCK_K
        a = tl.load(p_ptrs, mask=(offs_m[:, None] < N) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(v_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < D), other=0.0)
        acc = tl.dot(a, b, acc)
        p_ptrs += BLOCK_K
        v_ptrs += BLOCK_K * D
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * D + offs_n[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < N) & (offs_n[None, :] < D))


def _build(inputs, params, causal):
    pm, v, y = inputs["p"], inputs["v"], inputs["y"]
    n, d = params["N"], params["D"]
    t = TILING
    programs = triton.cdiv(n, t["BLOCK_M"]) * triton.cdiv(d, t["BLOCK_N"])
    tiling = dict(t, CAUSAL=causal, programs=programs)

    def run():
        return causal_pv_kernel[(programs,)](
            pm,
            v,
            y,
            n,
            d,
            CAUSAL=causal,
            BLOCK_M=t["BLOCK_M"],
            BLOCK_N=t["BLOCK_N"],
            BLOCK_K=t["BLOCK_K"],
            GROUP_M=t["GROUP_M"],
            num_warps=t["num_warps"],
            num_stages=t["num_stages"],
        )

    return Plan(
        [Stage("pv", run, kernel=causal_pv_kernel, tiling=tiling, grid_blocks=programs)], output=lambda: y
    )


def build_v0(inputs, params):
    return _build(inputs, params, False)


def build_v1(inputs, params):
    return _build(inputs, params, True)
