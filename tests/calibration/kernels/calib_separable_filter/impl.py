"""Triton code of calib_separable_filter (imported only by the profiling worker).

One program per BY x BX = 32 x 64 output tile, 4 warps; zero padding at the borders (masked loads):

    v0: blur_2d_kernel: for i in range(K), j in range(K): acc += w2[i, j] * in[y + i - R, x + j - R];
    v1: rows_kernel (tmp[y, x] = sum_j g[j] in[y, x + j - R]), then cols_kernel (out = sum_i g[i] tmp[y + i - R, x]).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BY, BX, WARPS = 32, 64, 4


@triton.jit
def blur_2d_kernel(x_ptr, w_ptr, out_ptr, H, W, K: tl.constexpr, BY: tl.constexpr, BX: tl.constexpr):
    ys = tl.program_id(1) * BY + tl.arange(0, BY)[:, None]
    xs = tl.program_id(0) * BX + tl.arange(0, BX)[None, :]
    R: tl.constexpr = K // 2
    acc = tl.zeros((BY, BX), dtype=tl.float32)
    for i in range(K):
        yy = ys + (i - R)
        my = (yy >= 0) & (yy < H)
        for j in range(K):
            xx = xs + (j - R)
            m = my & (xx >= 0) & (xx < W)
            v = tl.load(x_ptr + yy * W + xx, mask=m, other=0.0)
            acc += tl.load(w_ptr + i * K + j) * v
    tl.store(out_ptr + ys * W + xs, acc, mask=(ys < H) & (xs < W))


@triton.jit
def rows_kernel(x_ptr, g_ptr, tmp_ptr, H, W, K: tl.constexpr, BY: tl.constexpr, BX: tl.constexpr):
    ys = tl.program_id(1) * BY + tl.arange(0, BY)[:, None]
    xs = tl.program_id(0) * BX + tl.arange(0, BX)[None, :]
    R: tl.constexpr = K // 2
    my = ys < H
    acc = tl.zeros((BY, BX), dtype=tl.float32)
    for j in range(K):
        xx = xs + (j - R)
        m = my & (xx >= 0) & (xx < W)
        acc += tl.load(g_ptr + j) * tl.load(x_ptr + ys * W + xx, mask=m, other=0.0)
    tl.store(tmp_ptr + ys * W + xs, acc, mask=my & (xs < W))


@triton.jit
def cols_kernel(tmp_ptr, g_ptr, out_ptr, H, W, K: tl.constexpr, BY: tl.constexpr, BX: tl.constexpr):
    ys = tl.program_id(1) * BY + tl.arange(0, BY)[:, None]
    xs = tl.program_id(0) * BX + tl.arange(0, BX)[None, :]
    R: tl.constexpr = K // 2
    mx = xs < W
    acc = tl.zeros((BY, BX), dtype=tl.float32)
    for i in range(K):
        yy = ys + (i - R)
        m = mx & (yy >= 0) & (yy < H)
        acc += tl.load(g_ptr + i) * tl.load(tmp_ptr + yy * W + xs, mask=m, other=0.0)
    tl.store(out_ptr + ys * W + xs, acc, mask=(ys < H) & mx)


def _grid(h, w):
    return (triton.cdiv(w, BX), triton.cdiv(h, BY))


def build_v0(inputs, p):
    x, w2, out = inputs["x"], inputs["w2"], inputs["out"]
    h, w, k = p["H"], p["W"], p["K"]
    grid = _grid(h, w)
    tiling = {"BY": BY, "BX": BX, "K": k, "num_warps": WARPS, "grid": list(grid)}

    def run():
        return blur_2d_kernel[grid](x, w2, out, h, w, K=k, BY=BY, BX=BX, num_warps=WARPS)

    return Plan(
        [Stage("blur", run, kernel=blur_2d_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])],
        output=lambda: out,
    )


def build_v1(inputs, p):
    x, g, tmp, out = inputs["x"], inputs["g"], inputs["tmp"], inputs["out"]
    h, w, k = p["H"], p["W"], p["K"]
    grid = _grid(h, w)
    tiling = {"BY": BY, "BX": BX, "K": k, "num_warps": WARPS, "grid": list(grid)}

    def rows():
        return rows_kernel[grid](x, g, tmp, h, w, K=k, BY=BY, BX=BX, num_warps=WARPS)

    def cols():
        return cols_kernel[grid](tmp, g, out, h, w, K=k, BY=BY, BX=BX, num_warps=WARPS)

    n = grid[0] * grid[1]
    return Plan(
        [
            Stage("rows", rows, kernel=rows_kernel, tiling=tiling, grid_blocks=n),
            Stage("cols", cols, kernel=cols_kernel, tiling=tiling, grid_blocks=n),
        ],
        output=lambda: out,
    )
