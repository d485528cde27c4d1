"""Triton code of calib_kan_bspline (imported only by the profiling worker).

One input a lane, BLOCK inputs a program; x fp16 in, four fp16 outputs (rows of Y [4, N]) out.
deboor_kernel (v0): the 12 knots loaded; the 11 degree-0 indicators, then the Cox-de Boor recursion over the whole
grid written out (10 + 9 + 8 terms of two divisions each: 54 divisions an input), then Y[o] = sum_m C[o, m] B_m.
uniform_kernel (v1): the interval j and its fraction f from the uniform grid (t_3, h = t_4 - t_3), the four
uniform cubic B-spline weights, Y[o] = sum_i C[o, j + i] w_i (gathers from the 128-byte coefficient table).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 512, 4
G, K, OUT = 5, 3, 4


@triton.jit
def _term(x, ta, tb, tc, td, ba, bb):
    # one Cox-de Boor term: (x - t_m) / (t_{m+d} - t_m) B_m + (t_{m+d+1} - x) / (t_{m+d+1} - t_{m+1}) B_{m+1}
    return (x - ta) / (tb - ta) * ba + (td - x) / (td - tc) * bb


@triton.jit
def deboor_kernel(x_ptr, t_ptr, c_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    t0 = tl.load(t_ptr + 0)
    t1 = tl.load(t_ptr + 1)
    t2 = tl.load(t_ptr + 2)
    t3 = tl.load(t_ptr + 3)
    t4 = tl.load(t_ptr + 4)
    t5 = tl.load(t_ptr + 5)
    t6 = tl.load(t_ptr + 6)
    t7 = tl.load(t_ptr + 7)
    t8 = tl.load(t_ptr + 8)
    t9 = tl.load(t_ptr + 9)
    t10 = tl.load(t_ptr + 10)
    t11 = tl.load(t_ptr + 11)
    # degree 0: the indicator of [t_m, t_m+1)
    a0 = tl.where((x >= t0) & (x < t1), 1.0, 0.0)
    a1 = tl.where((x >= t1) & (x < t2), 1.0, 0.0)
    a2 = tl.where((x >= t2) & (x < t3), 1.0, 0.0)
    a3 = tl.where((x >= t3) & (x < t4), 1.0, 0.0)
    a4 = tl.where((x >= t4) & (x < t5), 1.0, 0.0)
    a5 = tl.where((x >= t5) & (x < t6), 1.0, 0.0)
    a6 = tl.where((x >= t6) & (x < t7), 1.0, 0.0)
    a7 = tl.where((x >= t7) & (x < t8), 1.0, 0.0)
    a8 = tl.where((x >= t8) & (x < t9), 1.0, 0.0)
    a9 = tl.where((x >= t9) & (x < t10), 1.0, 0.0)
    a10 = tl.where((x >= t10) & (x < t11), 1.0, 0.0)
    # degree 1
    b0 = _term(x, t0, t1, t1, t2, a0, a1)
    b1 = _term(x, t1, t2, t2, t3, a1, a2)
    b2 = _term(x, t2, t3, t3, t4, a2, a3)
    b3 = _term(x, t3, t4, t4, t5, a3, a4)
    b4 = _term(x, t4, t5, t5, t6, a4, a5)
    b5 = _term(x, t5, t6, t6, t7, a5, a6)
    b6 = _term(x, t6, t7, t7, t8, a6, a7)
    b7 = _term(x, t7, t8, t8, t9, a7, a8)
    b8 = _term(x, t8, t9, t9, t10, a8, a9)
    b9 = _term(x, t9, t10, t10, t11, a9, a10)
    # degree 2
    c0 = _term(x, t0, t2, t1, t3, b0, b1)
    c1 = _term(x, t1, t3, t2, t4, b1, b2)
    c2 = _term(x, t2, t4, t3, t5, b2, b3)
    c3 = _term(x, t3, t5, t4, t6, b3, b4)
    c4 = _term(x, t4, t6, t5, t7, b4, b5)
    c5 = _term(x, t5, t7, t6, t8, b5, b6)
    c6 = _term(x, t6, t8, t7, t9, b6, b7)
    c7 = _term(x, t7, t9, t8, t10, b7, b8)
    c8 = _term(x, t8, t10, t9, t11, b8, b9)
    # degree 3
    d0 = _term(x, t0, t3, t1, t4, c0, c1)
    d1 = _term(x, t1, t4, t2, t5, c1, c2)
    d2 = _term(x, t2, t5, t3, t6, c2, c3)
    d3 = _term(x, t3, t6, t4, t7, c3, c4)
    d4 = _term(x, t4, t7, t5, t8, c4, c5)
    d5 = _term(x, t5, t8, t6, t9, c5, c6)
    d6 = _term(x, t6, t9, t7, t10, c6, c7)
    d7 = _term(x, t7, t10, t8, t11, c7, c8)
    for o in tl.static_range(4):
        y = (
            tl.load(c_ptr + o * 8 + 0) * d0
            + tl.load(c_ptr + o * 8 + 1) * d1
            + tl.load(c_ptr + o * 8 + 2) * d2
            + tl.load(c_ptr + o * 8 + 3) * d3
            + tl.load(c_ptr + o * 8 + 4) * d4
            + tl.load(c_ptr + o * 8 + 5) * d5
            + tl.load(c_ptr + o * 8 + 6) * d6
            + tl.load(c_ptr + o * 8 + 7) * d7
        )
        tl.store(y_ptr + o * N + offs, y.to(tl.float16), mask=mask)


@triton.jit
def uniform_kernel(x_ptr, t_ptr, c_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    lo = tl.load(t_ptr + 3)
    inv_h = 1.0 / (tl.load(t_ptr + 4) - lo)
    u = (x - lo) * inv_h
    j = tl.minimum(tl.maximum(tl.floor(u), 0.0), 4.0)  # the interval, 0..G-1
    f = u - j
    ji = j.to(tl.int32)
    f2 = f * f
    f3 = f2 * f
    w0 = (1.0 - f) * (1.0 - f) * (1.0 - f) * (1.0 / 6.0)
    w1 = (3.0 * f3 - 6.0 * f2 + 4.0) * (1.0 / 6.0)
    w2 = (-3.0 * f3 + 3.0 * f2 + 3.0 * f + 1.0) * (1.0 / 6.0)
    w3 = f3 * (1.0 / 6.0)
    for o in tl.static_range(4):
        cp = c_ptr + o * 8 + ji
        y = tl.load(cp) * w0 + tl.load(cp + 1) * w1 + tl.load(cp + 2) * w2 + tl.load(cp + 3) * w3
        tl.store(y_ptr + o * N + offs, y.to(tl.float16), mask=mask)


def _build(name, kernel, inputs, params):
    x, t, c, out = inputs["X"], inputs["T"], inputs["C"], inputs["out"]
    n = params["N"]
    grid = (triton.cdiv(n, BLOCK),)

    def run():
        return kernel[grid](x, t, c, out, n, BLOCK=BLOCK, num_warps=WARPS)

    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": list(grid)}
    return Plan([Stage(name, run, kernel=kernel, tiling=tiling, grid_blocks=grid[0])], output=lambda: out)


def build_v0(inputs, params):
    return _build("bspline_deboor", deboor_kernel, inputs, params)


def build_v1(inputs, params):
    return _build("bspline_uniform", uniform_kernel, inputs, params)
