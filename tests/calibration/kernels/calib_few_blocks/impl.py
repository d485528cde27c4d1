"""Triton code of calib_few_blocks (imported only by the profiling worker)."""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import A, B

BLOCK = 2048  # elements per step (v0) / per program (v1): 16 per thread, 8 KB of loads in flight per step
WARPS = 4
STAGES = 1    # v0's loop is not software-pipelined: one step's loads in flight per program


@triton.jit
def axpb_chunk_kernel(x_ptr, y_ptr, n, chunk, a, b, BLOCK: tl.constexpr):
    """v0: program p handles elements [p*chunk, (p+1)*chunk) in BLOCK-element steps (chunk % BLOCK == 0)."""
    start = tl.program_id(0).to(tl.int64) * chunk
    for off in range(0, chunk, BLOCK):
        i = start + off + tl.arange(0, BLOCK)
        mask = i < n
        x = tl.load(x_ptr + i, mask=mask)
        tl.store(y_ptr + i, x * a + b, mask=mask)


@triton.jit
def axpb_kernel(x_ptr, y_ptr, n, a, b, BLOCK: tl.constexpr):
    """v1: one BLOCK-element step per program."""
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(x_ptr + i, mask=mask)
    tl.store(y_ptr + i, x * a + b, mask=mask)


def build_v0(inputs, p):
    x, y = inputs["x"], inputs["y"]
    n, programs = p["n"], p["programs"]
    block = min(BLOCK, triton.next_power_of_2(n))
    chunk = triton.cdiv(triton.cdiv(n, programs), block) * block  # programs past n do nothing
    tiling = {"BLOCK": block, "num_warps": WARPS, "num_stages": STAGES, "programs": programs, "chunk": chunk}

    def run():
        return axpb_chunk_kernel[(programs,)](x, y, n, chunk, A, B, BLOCK=block, num_warps=WARPS, num_stages=STAGES)

    return Plan([Stage("axpb", run, kernel=axpb_chunk_kernel, tiling=tiling, grid_blocks=programs)],
                output=lambda: y)


def build_v1(inputs, p):
    x, y = inputs["x"], inputs["y"]
    n = p["n"]
    block = min(BLOCK, triton.next_power_of_2(n))
    grid = (triton.cdiv(n, block),)
    tiling = {"BLOCK": block, "num_warps": WARPS, "num_stages": STAGES, "programs": grid[0]}

    def run():
        return axpb_kernel[grid](x, y, n, A, B, BLOCK=block, num_warps=WARPS, num_stages=STAGES)

    return Plan([Stage("axpb", run, kernel=axpb_kernel, tiling=tiling, grid_blocks=grid[0])], output=lambda: y)
