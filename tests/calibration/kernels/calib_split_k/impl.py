"""Triton code of calib_split_k (imported only by the profiling worker).

One kernel for both versions: dW = Xᵀ @ dY tiled BLOCK_M x BLOCK_N x BLOCK_K (tl.dot, fp32
accumulation), the grid (output tiles, SPLIT_K): program (t, s) reduces the s-th of SPLIT_K equal
slices of the K (token) dimension into tile t.

    v0: SPLIT_K=1: one program per output tile, its K loop over all T tokens, the tile stored;
    v1: SPLIT_K=32: 32 programs per tile, each over T/32 tokens, their partial tiles added with
        relaxed atomics into dW (zeroed first in the stage).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

TILING = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3}


@triton.jit
def xt_dy_kernel(
    x_ptr,
    dy_ptr,
    dw_ptr,
    M,
    N,
    K,
    K_PER_SPLIT,
    ATOMIC: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    tile = tl.program_id(0)
    split = tl.program_id(1)
    tiles_n = tl.cdiv(N, BLOCK_N)
    offs_m = (tile // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = (tile % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    k0 = split * K_PER_SPLIT
    k_end = tl.minimum(k0 + K_PER_SPLIT, K)
    offs_k = k0 + tl.arange(0, BLOCK_K)
    # A = Xᵀ: A[m, k] = X[k, m] (X is [K, M] row-major); B = dY [K, N] row-major.
    a_ptrs = x_ptr + offs_k[None, :].to(tl.int64) * M + offs_m[:, None]
    b_ptrs = dy_ptr + offs_k[:, None].to(tl.int64) * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(k0, k_end, BLOCK_K):
        kk = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (kk[None, :] < k_end), other=0.0)
        b = tl.load(b_ptrs, mask=(kk[:, None] < k_end) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * M
        b_ptrs += BLOCK_K * N
    c_ptrs = dw_ptr + offs_m[:, None] * N + offs_n[None, :]
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if ATOMIC:
        tl.atomic_add(c_ptrs, acc, mask=c_mask, sem="relaxed")
    else:
        tl.store(c_ptrs, acc, mask=c_mask)


def _build(inputs, p, split_k):
    x, dy, dw = inputs["x"], inputs["dy"], inputs["dw"]
    k, m = x.shape
    n = dy.shape[1]
    t = TILING
    tiles = triton.cdiv(m, t["BLOCK_M"]) * triton.cdiv(n, t["BLOCK_N"])
    k_per_split = triton.cdiv(triton.cdiv(k, split_k), t["BLOCK_K"]) * t["BLOCK_K"]
    grid = (tiles, split_k)
    programs = tiles * split_k
    tiling = dict(t, SPLIT_K=split_k, programs=programs)
    atomic = split_k > 1

    def run():
        if atomic:
            dw.zero_()
        return xt_dy_kernel[grid](
            x,
            dy,
            dw,
            m,
            n,
            k,
            k_per_split,
            ATOMIC=atomic,
            BLOCK_M=t["BLOCK_M"],
            BLOCK_N=t["BLOCK_N"],
            BLOCK_K=t["BLOCK_K"],
            num_warps=t["num_warps"],
            num_stages=t["num_stages"],
        )

    return Plan(
        [Stage("dw", run, kernel=xt_dy_kernel, tiling=tiling, grid_blocks=programs)], output=lambda: dw
    )


def build_v0(inputs, p):
    return _build(inputs, p, 1)


def build_v1(inputs, p):
    return _build(inputs, p, 32)
