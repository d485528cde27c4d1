"""Triton code of calib_xorshift64 (imported only by the profiling worker).

One program BLOCK states: the seed loaded, 64 xorshift32 steps, the state stored as int32. v0 carries the state
in int64 (masked to 32 bits after each left shift), v1 in uint32.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS, STEPS = 1024, 4, 64


@triton.jit
def xorshift_i64_kernel(s_ptr, o_ptr, N, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(s_ptr + offs, mask=mask, other=1).to(tl.int64) & 0xFFFFFFFF
    for _ in range(STEPS):
        x = x ^ ((x << 13) & 0xFFFFFFFF)
        x = x ^ (x >> 17)
        x = x ^ ((x << 5) & 0xFFFFFFFF)
    tl.store(o_ptr + offs, x.to(tl.int32), mask=mask)


@triton.jit
def xorshift_u32_kernel(s_ptr, o_ptr, N, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(s_ptr + offs, mask=mask, other=1).to(tl.uint32, bitcast=True)
    for _ in range(STEPS):
        x = x ^ (x << 13)
        x = x ^ (x >> 17)
        x = x ^ (x << 5)
    tl.store(o_ptr + offs, x.to(tl.int32, bitcast=True), mask=mask)


def _build(name, kernel, inputs, params):
    s, out = inputs["seeds"], inputs["out"]
    n = params["N"]
    grid = (triton.cdiv(n, BLOCK),)

    def run():
        return kernel[grid](s, out, n, STEPS=STEPS, BLOCK=BLOCK, num_warps=WARPS)

    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": list(grid)}
    return Plan([Stage(name, run, kernel=kernel, tiling=tiling, grid_blocks=grid[0])], output=lambda: out)


def build_v0(inputs, params):
    return _build("xorshift_i64", xorshift_i64_kernel, inputs, params)


def build_v1(inputs, params):
    return _build("xorshift_u32", xorshift_u32_kernel, inputs, params)
