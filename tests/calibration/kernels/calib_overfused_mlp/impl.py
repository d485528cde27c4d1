"""Triton code of calib_overfused_mlp (imported only by the profiling worker).

fused_kernel (v0): program (pid_m, pid_n) one [BM, BN] tile of Y; for each hidden chunk of BH columns it
recomputes hk = relu(X[rows, :] W1[:, chunk]) over D in steps of BK (tl.dot, fp32), rounds it to fp16 and adds
hk W2[chunk, cols] to the fp32 accumulator.
gemm_kernel (v1): one [BM, BN] tile of C = A B over K in steps of BK (tl.dot), optional ReLU, stored as fp16;
"up": Hd = relu(X W1), "down": Y = Hd W2.
"""

import torch
import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BM, BN, BK, BH, WARPS, STAGES = 128, 128, 64, 64, 8, 3


@triton.jit
def fused_kernel(
    x_ptr,
    w1_ptr,
    w2_ptr,
    y_ptr,
    M,
    D,
    H,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    BH: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(D, BN)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rh = tl.arange(0, BH)
    acc = tl.zeros((BM, BN), tl.float32)
    for h0 in range(0, H, BH):
        hk = tl.zeros((BM, BH), tl.float32)
        for k0 in range(0, D, BK):
            a = tl.load(
                x_ptr + rm[:, None].to(tl.int64) * D + (k0 + rk)[None, :],
                mask=(rm[:, None] < M) & (k0 + rk < D)[None, :],
                other=0.0,
            )
            b = tl.load(
                w1_ptr + (k0 + rk)[:, None].to(tl.int64) * H + (h0 + rh)[None, :],
                mask=(k0 + rk < D)[:, None] & (h0 + rh < H)[None, :],
                other=0.0,
            )
            hk = tl.dot(a, b, hk)
        hk16 = tl.maximum(hk, 0.0).to(tl.float16)
        w2 = tl.load(
            w2_ptr + (h0 + rh)[:, None].to(tl.int64) * D + rn[None, :],
            mask=(h0 + rh < H)[:, None] & (rn[None, :] < D),
            other=0.0,
        )
        acc = tl.dot(hk16, w2, acc)
    tl.store(
        y_ptr + rm[:, None].to(tl.int64) * D + rn[None, :],
        acc.to(tl.float16),
        mask=(rm[:, None] < M) & (rn[None, :] < D),
    )


@triton.jit
def gemm_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, RELU: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(
            a_ptr + rm[:, None].to(tl.int64) * K + (k0 + rk)[None, :],
            mask=(rm[:, None] < M) & (k0 + rk < K)[None, :],
            other=0.0,
        )
        b = tl.load(
            b_ptr + (k0 + rk)[:, None].to(tl.int64) * N + rn[None, :],
            mask=(k0 + rk < K)[:, None] & (rn[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(a, b, acc)
    if RELU:
        acc = tl.maximum(acc, 0.0)
    tl.store(
        c_ptr + rm[:, None].to(tl.int64) * N + rn[None, :],
        acc.to(tl.float16),
        mask=(rm[:, None] < M) & (rn[None, :] < N),
    )


def _tiling(grid):
    return {"BM": BM, "BN": BN, "BK": BK, "num_warps": WARPS, "num_stages": STAGES, "grid": [grid]}


def build_v0(inputs, params):
    x, w1, w2, out = inputs["X"], inputs["W1"], inputs["W2"], inputs["out"]
    m, d, h = params["M"], params["D"], params["H"]
    grid = triton.cdiv(m, BM) * triton.cdiv(d, BN)

    def run():
        return fused_kernel[(grid,)](
            x, w1, w2, out, m, d, h, BM=BM, BN=BN, BK=BK, BH=BH, num_warps=WARPS, num_stages=STAGES
        )

    tiling = dict(_tiling(grid), BH=BH)
    return Plan(
        [Stage("mlp_fused", run, kernel=fused_kernel, tiling=tiling, grid_blocks=grid)], output=lambda: out
    )


def build_v1(inputs, params):
    x, w1, w2, out = inputs["X"], inputs["W1"], inputs["W2"], inputs["out"]
    m, d, h = params["M"], params["D"], params["H"]
    hid = torch.empty((m, h), device=x.device, dtype=torch.float16)
    g_up = triton.cdiv(m, BM) * triton.cdiv(h, BN)
    g_down = triton.cdiv(m, BM) * triton.cdiv(d, BN)

    def up():
        return gemm_kernel[(g_up,)](
            x, w1, hid, m, h, d, RELU=True, BM=BM, BN=BN, BK=BK, num_warps=WARPS, num_stages=STAGES
        )

    def down():
        return gemm_kernel[(g_down,)](
            hid, w2, out, m, d, h, RELU=False, BM=BM, BN=BN, BK=BK, num_warps=WARPS, num_stages=STAGES
        )

    return Plan(
        [
            Stage("up", up, kernel=gemm_kernel, tiling=_tiling(g_up), grid_blocks=g_up),
            Stage("down", down, kernel=gemm_kernel, tiling=_tiling(g_down), grid_blocks=g_down),
        ],
        output=lambda: out,
    )
