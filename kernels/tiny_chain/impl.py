"""Triton code of tiny_chain (imported only by the profiling worker)."""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK = 1024


@triton.jit
def add_const_kernel(src_ptr, dst_ptr, n, c, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask) + c, mask=mask)


def build(inputs, params, fused):
    x, out = inputs["x"], inputs["out"]
    n, k = params["n"], params["k"]
    grid = (triton.cdiv(n, BLOCK),)

    def run_chain():
        ret = add_const_kernel[grid](x, out, n, 1.0, BLOCK=BLOCK, num_warps=4)
        for _ in range(k - 1):
            add_const_kernel[grid](out, out, n, 1.0, BLOCK=BLOCK, num_warps=4)
        return ret

    def run_fused():
        return add_const_kernel[grid](x, out, n, float(k), BLOCK=BLOCK, num_warps=4)

    return Plan(stages=[Stage("chain", run_fused if fused else run_chain, kernel=add_const_kernel,
                              tiling={"BLOCK": BLOCK, "num_warps": 4, "launches": 1 if fused else k},
                              grid_blocks=grid[0])],
                output=lambda: out)
