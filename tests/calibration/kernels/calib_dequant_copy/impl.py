"""Triton code of calib_dequant_copy (imported only by the profiling worker).

dequant_kernel (v0): one [BK_D, BN_D] tile of W16 = Wq * s (fp32 product, stored fp16).
gemm_kernel: program n one [BLOCK_M, BLOCK_N] column tile of Y = X B over K in steps of BLOCK_K (tl.dot, fp32
accumulator); B fp16 (v0: the dequantised copy, SCALED = False) or int8 converted to fp16 after the load and
the column scales applied to the accumulator (v1: SCALED = True). Row tiles of M loop inside the program.
"""

import torch
import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BK_D, BN_D, WARPS_D = 64, 128, 4
BLOCK_M, BLOCK_N, BLOCK_K, WARPS, STAGES = 16, 64, 128, 4, 4


@triton.jit
def dequant_kernel(wq_ptr, s_ptr, w_ptr, K, N, BK: tl.constexpr, BN: tl.constexpr):
    rk = tl.program_id(0) * BK + tl.arange(0, BK)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rk[:, None] < K) & (rn[None, :] < N)
    offs = rk[:, None].to(tl.int64) * N + rn[None, :]
    q = tl.load(wq_ptr + offs, mask=mask, other=0)
    s = tl.load(s_ptr + rn, mask=rn < N, other=0.0)
    w = q.to(tl.float32) * s.to(tl.float32)[None, :]
    tl.store(w_ptr + offs, w.to(tl.float16), mask=mask)


@triton.jit
def gemm_kernel(
    x_ptr,
    b_ptr,
    s_ptr,
    y_ptr,
    M,
    K,
    N,
    SCALED: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk0 = tl.arange(0, BLOCK_K)
    for m0 in range(0, M, BLOCK_M):
        rm = m0 + tl.arange(0, BLOCK_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
        for k0 in range(0, K, BLOCK_K):
            rk = k0 + rk0
            a = tl.load(
                x_ptr + rm[:, None] * K + rk[None, :],
                mask=(rm[:, None] < M) & (rk[None, :] < K),
                other=0.0,
            )
            b = tl.load(
                b_ptr + rk[:, None].to(tl.int64) * N + rn[None, :],
                mask=(rk[:, None] < K) & (rn[None, :] < N),
                other=0,
            )
            acc = tl.dot(a, b.to(tl.float16), acc)
        if SCALED:
            s = tl.load(s_ptr + rn, mask=rn < N, other=0.0)
            acc = acc * s.to(tl.float32)[None, :]
        tl.store(
            y_ptr + rm[:, None] * N + rn[None, :],
            acc.to(tl.float16),
            mask=(rm[:, None] < M) & (rn[None, :] < N),
        )


def _gemm_tiling(grid):
    return {
        "BLOCK_M": BLOCK_M,
        "BLOCK_N": BLOCK_N,
        "BLOCK_K": BLOCK_K,
        "num_warps": WARPS,
        "num_stages": STAGES,
        "grid": [grid],
    }


def build_v0(inputs, params):
    x, wq, s, out = inputs["X"], inputs["Wq"], inputs["S"], inputs["out"]
    m, k, n = params["M"], params["K"], params["N"]
    w16 = torch.empty((k, n), device=x.device, dtype=torch.float16)
    gd = (triton.cdiv(k, BK_D), triton.cdiv(n, BN_D))
    g = triton.cdiv(n, BLOCK_N)

    def dequant():
        return dequant_kernel[gd](wq, s, w16, k, n, BK=BK_D, BN=BN_D, num_warps=WARPS_D)

    def gemm():
        return gemm_kernel[(g,)](
            x,
            w16,
            s,
            out,
            m,
            k,
            n,
            SCALED=False,
            BLOCK_M=BLOCK_M,
            BLOCK_N=BLOCK_N,
            BLOCK_K=BLOCK_K,
            num_warps=WARPS,
            num_stages=STAGES,
        )

    return Plan(
        [
            Stage(
                "dequant",
                dequant,
                kernel=dequant_kernel,
                tiling={"BK": BK_D, "BN": BN_D, "num_warps": WARPS_D, "grid": list(gd)},
                grid_blocks=gd[0] * gd[1],
            ),
            Stage("gemm", gemm, kernel=gemm_kernel, tiling=_gemm_tiling(g), grid_blocks=g),
        ],
        output=lambda: out,
    )


def build_v1(inputs, params):
    x, wq, s, out = inputs["X"], inputs["Wq"], inputs["S"], inputs["out"]
    m, k, n = params["M"], params["K"], params["N"]
    g = triton.cdiv(n, BLOCK_N)

    def gemm():
        return gemm_kernel[(g,)](
            x,
            wq,
            s,
            out,
            m,
            k,
            n,
            SCALED=True,
            BLOCK_M=BLOCK_M,
            BLOCK_N=BLOCK_N,
            BLOCK_K=BLOCK_K,
            num_warps=WARPS,
            num_stages=STAGES,
        )

    return Plan(
        [Stage("gemm_int8", gemm, kernel=gemm_kernel, tiling=_gemm_tiling(g), grid_blocks=g)],
        output=lambda: out,
    )
