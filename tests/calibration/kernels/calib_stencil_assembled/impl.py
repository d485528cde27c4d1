"""Triton code of calib_stencil_assembled (imported only by the profiling worker).

ell_kernel (v0): program p outputs p * BLOCK .. + BLOCK (flat index i); y[i] = sum over k = 0..4 of
vals[k, i] * x[cols[k, i]] (centre, north, south, west, east: the products summed in that order).
stencil_kernel (v1): the same outputs from x: 4 x[i] - x[i - W] - x[i + W] - x[i - 1] + ... , each neighbour
masked (zero) outside the grid, the products summed in the same order.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 1024, 4


@triton.jit
def ell_kernel(x_ptr, vals_ptr, cols_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    acc = tl.zeros((BLOCK,), tl.float32)
    for k in tl.static_range(5):
        v = tl.load(vals_ptr + k * n + i, mask=m, other=0.0)
        c = tl.load(cols_ptr + k * n + i, mask=m, other=0)
        acc += v * tl.load(x_ptr + c, mask=m, other=0.0)
    tl.store(y_ptr + i, acc, mask=m)


@triton.jit
def stencil_kernel(x_ptr, y_ptr, n, H, W, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    r = i // W
    c = i - r * W
    acc = tl.zeros((BLOCK,), tl.float32)
    acc += 4.0 * tl.load(x_ptr + i, mask=m, other=0.0)
    acc += -1.0 * tl.load(x_ptr + i - W, mask=m & (r > 0), other=0.0)
    acc += -1.0 * tl.load(x_ptr + i + W, mask=m & (r < H - 1), other=0.0)
    acc += -1.0 * tl.load(x_ptr + i - 1, mask=m & (c > 0), other=0.0)
    acc += -1.0 * tl.load(x_ptr + i + 1, mask=m & (c < W - 1), other=0.0)
    tl.store(y_ptr + i, acc, mask=m)


def _build(v0):
    def build(inputs, params):
        x, out = inputs["X"], inputs["out"]
        h, w = params["H"], params["W"]
        n = h * w
        g = triton.cdiv(n, BLOCK)
        if v0:
            vals, cols = inputs["VALS"], inputs["COLS"]

            def run():
                return ell_kernel[(g,)](x, vals, cols, out, n, BLOCK=BLOCK, num_warps=WARPS)

            kernel, stage = ell_kernel, "laplace_ell"
        else:

            def run():
                return stencil_kernel[(g,)](x, out, n, h, w, BLOCK=BLOCK, num_warps=WARPS)

            kernel, stage = stencil_kernel, "laplace_stencil"
        tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": [g]}
        return Plan([Stage(stage, run, kernel=kernel, tiling=tiling, grid_blocks=g)], output=lambda: out)

    return build


build_v0 = _build(True)
build_v1 = _build(False)
