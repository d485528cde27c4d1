"""Triton code of calib_gauss_sep (imported only by the profiling worker).

Both kernels: one program a [BM, BN] = [32, 128] tile of D (4 warps), a loop over the K centres (each centre's
cx, cy, w loaded as scalars), an fp32 accumulator, the tile stored once.
direct_kernel (v0): acc += w · exp(-(dy²[:, None] + dx²[None, :]) · c), an exponential a pair.
outer_kernel (v1): per chunk of BK = 32 centres, fy = w · exp(-dy² · c) [BM, BK] and fx = exp(-dx² · c)
[BK, BN] (5120 exponentials for the chunk's 131072 pairs), acc = tl.dot(fy, fx, acc) in IEEE fp32 (FMAs,
not the tensor cores).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BM, BN, BK, WARPS = 32, 128, 32, 4


@triton.jit
def direct_kernel(cx_ptr, cy_ptr, w_ptr, out_ptr, H, W, K, c, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(1) * BM + tl.arange(0, BM)
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    y = rows.to(tl.float32)
    x = cols.to(tl.float32)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K):
        cy = tl.load(cy_ptr + k)
        cx = tl.load(cx_ptr + k)
        wk = tl.load(w_ptr + k)
        dy = y - cy
        dx = x - cx
        acc += wk * tl.exp(-(dy * dy)[:, None] * c - (dx * dx)[None, :] * c)
    ok = (rows[:, None] < H) & (cols[None, :] < W)
    tl.store(out_ptr + rows[:, None].to(tl.int64) * W + cols[None, :], acc, mask=ok)


@triton.jit
def outer_kernel(
    cx_ptr, cy_ptr, w_ptr, out_ptr, H, W, K, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    rows = tl.program_id(1) * BM + tl.arange(0, BM)
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    y = rows.to(tl.float32)
    x = cols.to(tl.float32)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        kok = ks < K
        cy = tl.load(cy_ptr + ks, mask=kok, other=0.0)
        cx = tl.load(cx_ptr + ks, mask=kok, other=0.0)
        wk = tl.load(w_ptr + ks, mask=kok, other=0.0)  # 0 past K: those centres add nothing
        dy = y[:, None] - cy[None, :]
        fy = wk[None, :] * tl.exp(-(dy * dy) * c)  # [BM, BK]: the rows' factors
        dx = x[None, :] - cx[:, None]
        fx = tl.exp(-(dx * dx) * c)  # [BK, BN]: the columns' factors
        acc = tl.dot(fy, fx, acc, input_precision="ieee")  # Σ_k fy[i, k] fx[k, j] in fp32 (FMAs)
    ok = (rows[:, None] < H) & (cols[None, :] < W)
    tl.store(out_ptr + rows[:, None].to(tl.int64) * W + cols[None, :], acc, mask=ok)


def _build(kernel, name, inputs, params, **extra):
    from . import SIGMA

    cx, cy, w, out = inputs["cx"], inputs["cy"], inputs["w"], inputs["out"]
    h, wd, k = params["H"], params["W"], params["K"]
    c = 1.0 / (2.0 * SIGMA * SIGMA)
    grid = (triton.cdiv(wd, BN), triton.cdiv(h, BM))

    def run():
        return kernel[grid](cx, cy, w, out, h, wd, k, c, BM=BM, BN=BN, num_warps=WARPS, **extra)

    tiling = {"BM": BM, "BN": BN, **extra, "num_warps": WARPS, "grid": list(grid)}
    stage = Stage(name, run, kernel=kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])
    return Plan([stage], output=lambda: out)


def build_v0(inputs, params):
    return _build(direct_kernel, "gauss2d", inputs, params)


def build_v1(inputs, params):
    return _build(outer_kernel, "gauss_outer", inputs, params, BK=BK)
