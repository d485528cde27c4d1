"""Triton code of calib_wide_block (imported only by the profiling worker).

One kernel for both versions: a program per row, the row loaded as one BLOCK-wide tile (masked beyond
N, other=-inf), fp32 max, exp, sum, scaled by 1/sum, stored masked.

    v0: BLOCK = 4096 (the largest N the kernel accepts), whatever N is;
    v1: BLOCK = triton.next_power_of_2(N).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

MAX_N = 4096  # v0's block: the longest row supported
WARPS = 4


@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e * (1.0 / tl.sum(e, axis=0))
    tl.store(y_ptr + row * N + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def _build(inputs, p, block):
    x, y = inputs["x"], inputs["y"]
    m, n = x.shape
    tiling = {"BLOCK": block, "num_warps": WARPS, "grid": [m]}

    def run():
        return softmax_kernel[(m,)](x, y, n, BLOCK=block, num_warps=WARPS)

    return Plan(
        [Stage("softmax", run, kernel=softmax_kernel, tiling=tiling, grid_blocks=m)],
        output=lambda: y,
    )


def build_v0(inputs, p):
    return _build(inputs, p, MAX_N)


def build_v1(inputs, p):
    return _build(inputs, p, triton.next_power_of_2(p["N"]))
