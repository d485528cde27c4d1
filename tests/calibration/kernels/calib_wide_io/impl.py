"""Triton code of calib_wide_io (imported only by the profiling worker).

One kernel for both versions; the versions differ only in the tensors handed to it:

    v0: h, y, gate and out in float32 (the upcast copies): 4-byte elements;
    v1: h, y, gate and out in the model's dtype (bf16): 2-byte elements.

The math is fp32 in both (loads upcast, the store casts to the output's type).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK = 1024  # columns per program: 8 per thread at 4 warps (16-byte loads in bf16, 2 x 16 in fp32)
WARPS = 4


@triton.jit
def gated_residual_kernel(h_ptr, y_ptr, g_ptr, out_ptr, C, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < C
    offs = row * C + cols
    h = tl.load(h_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (h + g * y).to(out_ptr.dtype.element_ty), mask=mask)


def _build(inputs, p, suffix):
    h, y, g, out = (inputs[k + suffix] for k in ("h", "y", "gate", "out"))
    rows, c = p["rows"], p["C"]
    grid = (rows, triton.cdiv(c, BLOCK))
    programs = grid[0] * grid[1]
    tiling = {
        "BLOCK": BLOCK,
        "num_warps": WARPS,
        "num_stages": 1,
        "io_dtype": str(h.dtype),
        "programs": programs,
    }

    def run():
        return gated_residual_kernel[grid](h, y, g, out, c, BLOCK=BLOCK, num_warps=WARPS, num_stages=1)

    return Plan(
        [Stage("residual", run, kernel=gated_residual_kernel, tiling=tiling, grid_blocks=programs)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, "32")


def build_v1(inputs, p):
    return _build(inputs, p, "")
