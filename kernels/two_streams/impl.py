"""Triton code of two_streams (imported only by the profiling worker)."""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import C0, C1

BLOCK = 1024


@triton.jit
def poly_kernel(x_ptr, out_ptr, n, iters, c1, c0, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0.0)
    for _ in range(iters):
        v = v * c1 + c0
    tl.store(out_ptr + offs, v, mask=mask)


def build(inputs, params, kind):
    n, iters = params["n"], params["iters"]
    grid = (triton.cdiv(n, BLOCK),)
    tiling = {"BLOCK": BLOCK, "num_warps": 4}

    def launcher(src, dst):
        def run():
            return poly_kernel[grid](src, dst, n, iters, C1, C0, BLOCK=BLOCK, num_warps=4)
        return run

    streams = (0, 1) if kind == "concurrent" else (0, 0)
    return Plan(
        stages=[Stage("branch_a", launcher(inputs["x"], inputs["a"]), kernel=poly_kernel, tiling=tiling,
                      grid_blocks=grid[0], stream=streams[0]),
                Stage("branch_b", launcher(inputs["y"], inputs["b"]), kernel=poly_kernel, tiling=tiling,
                      grid_blocks=grid[0], stream=streams[1])],
        output=lambda: (inputs["a"], inputs["b"]),
        kind=kind,
    )
