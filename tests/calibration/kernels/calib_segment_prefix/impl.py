"""Triton code of calib_segment_prefix (imported only by the profiling worker).

One kernel for both versions, a program per segment pooling its rows in tiles of BLOCK_L x D, the
segment's start found as a constexpr says:

    v0: OFFSETS=False: start = sum of lengths[0:s], a runtime loop in the program;
    v1: OFFSETS=True: start = offsets[s].
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage


@triton.jit
def pool_kernel(
    x_ptr, len_ptr, offs_ptr, out_ptr, D: tl.constexpr, BLOCK_L: tl.constexpr, OFFSETS: tl.constexpr
):
    s = tl.program_id(0)
    n = tl.load(len_ptr + s)
    if OFFSETS:
        start = tl.load(offs_ptr + s)
    else:
        start = n * 0
        for i in range(s):
            start += tl.load(len_ptr + i)
    cols = tl.arange(0, D)
    acc = tl.zeros((BLOCK_L, D), dtype=tl.float32)
    for t in range(0, n, BLOCK_L):
        r = t + tl.arange(0, BLOCK_L)
        rows = (start + r).to(tl.int64)
        acc += tl.load(x_ptr + rows[:, None] * D + cols[None, :], mask=(r < n)[:, None], other=0.0).to(
            tl.float32
        )
    mean = tl.sum(acc, axis=0) / n.to(tl.float32)
    tl.store(out_ptr + s * D + cols, mean.to(out_ptr.dtype.element_ty))


def _build(inputs, p, offsets):
    x, lens, offs, out = inputs["x"], inputs["lengths"], inputs["offsets"], inputs["out"]
    s, d = out.shape
    block_l = 64
    warps = 4
    tiling = {"BLOCK_L": block_l, "D": d, "OFFSETS": offsets, "num_warps": warps, "grid": [s]}

    def run():
        return pool_kernel[(s,)](x, lens, offs, out, D=d, BLOCK_L=block_l, OFFSETS=offsets, num_warps=warps)

    return Plan(
        [Stage("pool", run, kernel=pool_kernel, tiling=tiling, grid_blocks=s)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
