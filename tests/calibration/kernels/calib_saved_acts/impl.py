"""Triton code of calib_saved_acts (imported only by the profiling worker).

One kernel for both versions, a program of 8 warps per BLOCK = 2048 columns of one row (grid M x cdiv(N,
BLOCK)), the stores chosen by a constexpr:

    v0: SAVE=True: y, and h = x + bias and t = tanh(...) in fp32 (the backward's saved tensors);
    v1: SAVE=False: y alone.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK = 2048
WARPS = 8


@triton.jit
def bias_gelu_kernel(x_ptr, bias_ptr, h_ptr, t_ptr, out_ptr, N, BLOCK: tl.constexpr, SAVE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = cols < N
    off = row * N + cols
    h = tl.load(x_ptr + off, mask=ok, other=0.0).to(tl.float32) + tl.load(bias_ptr + cols, mask=ok, other=0.0)
    u = 0.7978845608028654 * (h + 0.044715 * h * h * h)
    t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)  # tanh(u), saturating to +-1
    y = 0.5 * h * (1.0 + t)
    if SAVE:
        tl.store(h_ptr + off, h, mask=ok)
        tl.store(t_ptr + off, t, mask=ok)
    tl.store(out_ptr + off, y.to(out_ptr.dtype.element_ty), mask=ok)


def _build(inputs, p, save):
    x, bias, h, t, out = inputs["x"], inputs["bias"], inputs["h"], inputs["t"], inputs["out"]
    m, n = x.shape
    grid = (m, triton.cdiv(n, BLOCK))
    tiling = {"BLOCK": BLOCK, "SAVE": save, "num_warps": WARPS, "grid": list(grid)}

    def run():
        return bias_gelu_kernel[grid](x, bias, h, t, out, n, BLOCK=BLOCK, SAVE=save, num_warps=WARPS)

    return Plan(
        [Stage("bias_gelu", run, kernel=bias_gelu_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, True)


def build_v1(inputs, p):
    return _build(inputs, p, False)
