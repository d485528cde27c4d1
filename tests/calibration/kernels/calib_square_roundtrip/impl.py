"""Triton code of calib_square_roundtrip (imported only by the profiling worker).

One reduction kernel for both versions: a program per row, BLOCK elements per step over the row's
N columns, fp32 sum, rms = sqrt(sum / N) stored.

    v0: square_kernel writes buf = x.float() * x.float() (fp32, [M, N]), then row_rms_kernel with
        SQUARE=False sums buf's rows: the squares make a round trip through DRAM;
    v1: row_rms_kernel with SQUARE=True reads x and squares in registers.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK = 2048  # elements per step of the row reduction (16 per thread at 4 warps)
MAP_BLOCK = 4096  # elements per program of the map kernel
WARPS = 4


@triton.jit
def square_kernel(x_ptr, buf_ptr, total, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = idx < total
    x = tl.load(x_ptr + idx, mask=m, other=0.0).to(tl.float32)
    tl.store(buf_ptr + idx, x * x, mask=m)


@triton.jit
def row_rms_kernel(src_ptr, out_ptr, N, SQUARE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = src_ptr + row.to(tl.int64) * N
    acc = tl.zeros((BLOCK,), tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        v = tl.load(base + cols, mask=cols < N, other=0.0).to(tl.float32)
        if SQUARE:
            v = v * v
        acc += v
    tl.store(out_ptr + row, tl.sqrt(tl.sum(acc, axis=0) / N))


def _build(inputs, p, fused):
    import torch

    x, rms = inputs["x"], inputs["rms"]
    m, n = x.shape
    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": [m], "fused": fused}
    if fused:

        def run():
            return row_rms_kernel[(m,)](x, rms, n, SQUARE=True, BLOCK=BLOCK, num_warps=WARPS)

        programs = m
    else:
        buf = torch.empty((m, n), device=x.device, dtype=torch.float32)  # the intermediate (made at build)
        map_grid = (triton.cdiv(m * n, MAP_BLOCK),)
        tiling["MAP_BLOCK"] = MAP_BLOCK
        tiling["map_grid"] = list(map_grid)

        def run():
            square_kernel[map_grid](x, buf, m * n, BLOCK=MAP_BLOCK, num_warps=WARPS)
            return row_rms_kernel[(m,)](buf, rms, n, SQUARE=False, BLOCK=BLOCK, num_warps=WARPS)

        programs = m  # the reduction kernel's grid (the map kernel's is in tiling)
    return Plan(
        [Stage("row_rms", run, kernel=row_rms_kernel, tiling=tiling, grid_blocks=programs)],
        output=lambda: rms,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
