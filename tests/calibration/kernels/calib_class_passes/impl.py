"""Triton code of calib_class_passes (imported only by the profiling worker).

One kernel for both versions: a program reads CHUNK elements of x and of the labels and accumulates,
for CB classes, the sum of x over the elements of each class ([CB, BLOCK] fp32 accumulators, one
reduction at the end), writing its CB partial sums into part[chunk, :]:

    v0: CB=1, grid (chunks, C): one program per chunk and class, chunk index fastest (the class on
        the grid's second axis): each chunk is read C times, the C readers a whole pass apart;
    v1: CB=C, grid (chunks,): one program per chunk for all C classes: each chunk read once.

The partial sums are added up after the stage (not timed).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import CHUNK  # elements per program

BLOCK = 1024  # elements per step: 8 per thread at 4 warps
WARPS = 4


@triton.jit
def class_sums_kernel(
    x_ptr, lab_ptr, part_ptr, N, C, CB: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr
):
    chunk = tl.program_id(0)
    cls = tl.program_id(1) * CB + tl.arange(0, CB)
    start = chunk.to(tl.int64) * CHUNK
    acc = tl.zeros((CB, BLOCK), tl.float32)
    for off in range(0, CHUNK, BLOCK):
        idx = start + off + tl.arange(0, BLOCK)
        m = idx < N
        x = tl.load(x_ptr + idx, mask=m, other=0.0).to(tl.float32)
        lab = tl.load(lab_ptr + idx, mask=m, other=255).to(tl.int32)
        acc += tl.where(lab[None, :] == cls[:, None], x[None, :], 0.0)
    tl.store(part_ptr + chunk * C + cls, tl.sum(acc, axis=1), mask=cls < C)


def _build(inputs, p, per_program):
    x, lab, part = inputs["x"], inputs["labels"], inputs["part"]
    n, c = p["N"], p["C"]
    chunks = triton.cdiv(n, CHUNK)
    cb = triton.next_power_of_2(c) if per_program else 1
    grid = (chunks, 1 if per_program else c)
    programs = grid[0] * grid[1]
    tiling = {
        "BLOCK": BLOCK,
        "CHUNK": CHUNK,
        "CB": cb,
        "num_warps": WARPS,
        "grid": list(grid),
        "programs": programs,
    }

    def run():
        return class_sums_kernel[grid](x, lab, part, n, c, CB=cb, CHUNK=CHUNK, BLOCK=BLOCK, num_warps=WARPS)

    return Plan(
        [Stage("class_sums", run, kernel=class_sums_kernel, tiling=tiling, grid_blocks=programs)],
        output=lambda: part.double().sum(0).float(),  # the chunks' partial sums added up (not timed)
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
