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


def _graphed(fn, like):
    """``fn``'s launches captured once in a CUDA graph and replayed: the same kernels, launched by
    the driver in one call (on the CPU, where there are no graphs, ``fn`` itself)."""
    import torch

    if not like.is_cuda:
        return fn
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()  # compile and warm up outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def build(inputs, params, fused, graph=False):
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

    fn = run_fused if fused else (_graphed(run_chain, x) if graph else run_chain)
    return Plan(stages=[Stage("chain", fn, kernel=add_const_kernel,
                              tiling={"BLOCK": BLOCK, "num_warps": 4, "launches": 1 if fused else k},
                              grid_blocks=grid[0])],
                output=lambda: out)
