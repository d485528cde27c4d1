"""Triton code of calib_syrk (imported only by the profiling worker).

One kernel for both versions: a tiled GEMM tile C[i, j] = X[i-block] · X[j-block]ᵀ, one program per
entry of a table of (tile row, tile column) pairs in grouped order (GROUP_M tile rows at a time, the
columns of a group walked with its rows fastest, as Triton's matmul tutorial orders them):

    v0 (MIRROR=False): the table holds every tile of C; each program stores its tile;
    v1 (MIRROR=True): the table holds the tiles with i <= j (the same grouped order, the others left
        out); each program stores its tile and, off the diagonal, tl.trans(tile) at (j, i).
"""

import torch
import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

TILING = {"BLOCK": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}


@triton.jit
def gram_kernel(
    x_ptr,
    c_ptr,
    tiles_ptr,
    N,
    K,
    MIRROR: tl.constexpr,
    BLOCK: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    ti = tl.load(tiles_ptr + 2 * pid)
    tj = tl.load(tiles_ptr + 2 * pid + 1)
    offs_m = ti * BLOCK + tl.arange(0, BLOCK)
    offs_n = tj * BLOCK + tl.arange(0, BLOCK)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = x_ptr + (offs_m[:, None].to(tl.int64) * K + offs_k[None, :])
    b_ptrs = x_ptr + (offs_n[None, :].to(tl.int64) * K + offs_k[:, None])  # Xᵀ: [BLOCK_K, BLOCK]
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < N) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    out = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :]
    tl.store(c_ptrs, out, mask=(offs_m[:, None] < N) & (offs_n[None, :] < N))
    if MIRROR:
        if ti != tj:
            ct_ptrs = c_ptr + offs_n[:, None].to(tl.int64) * N + offs_m[None, :]
            tl.store(ct_ptrs, tl.trans(out), mask=(offs_n[:, None] < N) & (offs_m[None, :] < N))


def tile_table(t: int, group_m: int, upper: bool) -> list[tuple[int, int]]:
    """(tile row, tile column) pairs in grouped order; with ``upper`` only those with row <= column."""
    pairs = []
    for g0 in range(0, t, group_m):
        rows = range(g0, min(t, g0 + group_m))
        for j in range(t):
            for i in rows:
                if not upper or i <= j:
                    pairs.append((i, j))
    return pairs


def _build(inputs, params, mirror):
    x, c = inputs["x"], inputs["c"]
    n, k = params["N"], params["K"]
    t = TILING
    nt = triton.cdiv(n, t["BLOCK"])
    tiles = torch.tensor(tile_table(nt, t["GROUP_M"], mirror), dtype=torch.int32, device=x.device).flatten()
    programs = tiles.numel() // 2
    tiling = dict(t, MIRROR=mirror, programs=programs)

    def run():
        return gram_kernel[(programs,)](
            x,
            c,
            tiles,
            n,
            k,
            MIRROR=mirror,
            BLOCK=t["BLOCK"],
            BLOCK_K=t["BLOCK_K"],
            num_warps=t["num_warps"],
            num_stages=t["num_stages"],
        )

    return Plan(
        [Stage("gram", run, kernel=gram_kernel, tiling=tiling, grid_blocks=programs)], output=lambda: c
    )


def build_v0(inputs, params):
    return _build(inputs, params, False)


def build_v1(inputs, params):
    return _build(inputs, params, True)
