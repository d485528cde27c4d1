"""Triton code of calib_hist_onehot (imported only by the profiling worker).

One 16384-element chunk a program, its 256 counts a row of the output.
onehot_kernel (v0): 32 elements at a time, (x[:, None] == bins[None, :]) added into a [32, 256] int32
accumulator, summed over its rows at the end (elements past N compare as -1: no bin).
ballot_kernel (v1): 4096 elements at a time counted by tl.histogram (elements past N load as 0 and are taken
back out of bin 0).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BINS, CHUNK = 256, 16384
ROWS, V0_WARPS = 32, 8
SUB, V1_WARPS = 4096, 4


@triton.jit
def onehot_kernel(x_ptr, o_ptr, N, CHUNK: tl.constexpr, ROWS: tl.constexpr, BINS: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    bins = tl.arange(0, BINS)
    acc = tl.zeros([ROWS, BINS], dtype=tl.int32)
    for j in range(0, CHUNK, ROWS):
        offs = pid * CHUNK + j + tl.arange(0, ROWS)
        ok = offs < N
        v = tl.load(x_ptr + offs, mask=ok, other=0).to(tl.int32)
        v = tl.where(ok, v, -1)
        acc += (v[:, None] == bins[None, :]).to(tl.int32)
    tl.store(o_ptr + pid * BINS + bins, tl.sum(acc, axis=0))


@triton.jit
def ballot_kernel(x_ptr, o_ptr, N, CHUNK: tl.constexpr, SUB: tl.constexpr, BINS: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    bins = tl.arange(0, BINS)
    h = tl.zeros([BINS], dtype=tl.int32)
    for j in tl.static_range(0, CHUNK, SUB):
        offs = pid * CHUNK + j + tl.arange(0, SUB)
        ok = offs < N
        v = tl.load(x_ptr + offs, mask=ok, other=0).to(tl.int32)
        h += tl.histogram(v, BINS)
        h -= tl.where(bins == 0, tl.sum((~ok).to(tl.int32), axis=0), 0)
    tl.store(o_ptr + pid * BINS + bins, h)


def _build(name, launch, kernel, inputs, params):
    x, out = inputs["X"], inputs["out"]
    n = params["N"]
    grid = (triton.cdiv(n, CHUNK),)

    def run():
        return launch(grid, x, out, n)

    st = Stage(name, run, kernel=kernel, tiling={"CHUNK": CHUNK, "grid": list(grid)}, grid_blocks=grid[0])
    return Plan([st], output=lambda: out)


def build_v0(inputs, params):
    def launch(grid, x, out, n):
        return onehot_kernel[grid](x, out, n, CHUNK=CHUNK, ROWS=ROWS, BINS=BINS, num_warps=V0_WARPS)

    return _build("hist_onehot", launch, onehot_kernel, inputs, params)


def build_v1(inputs, params):
    def launch(grid, x, out, n):
        return ballot_kernel[grid](x, out, n, CHUNK=CHUNK, SUB=SUB, BINS=BINS, num_warps=V1_WARPS)

    return _build("hist_ballot", launch, ballot_kernel, inputs, params)
