"""Triton code of vector_add (imported only by the profiling worker)."""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage
from kprof_mcp.kernel import autotune_bench


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, x + y, mask=mask)


def _v1_configs():
    return [
        triton.Config({"BLOCK_SIZE": bs}, num_warps=w)
        for bs in (1024, 2048, 4096, 8192, 16384)
        for w in (4, 8, 16)
        if bs // (32 * w) >= 4  # at least 4 elements (16 B of fp32) per thread: full-width loads
    ]


# cache_results: a re-run after a failed autotune starts from the cached best config.
add_kernel_tuned = triton.autotune(
    configs=_v1_configs(), key=["n"], cache_results=True, do_bench=autotune_bench
)(add_kernel)


def build_v0(inputs, params):
    x, y, z = inputs["x"], inputs["y"], inputs["z"]
    n = params["n"]
    block = 1024
    grid = (triton.cdiv(n, block),)

    def run():
        return add_kernel[grid](x, y, z, n, BLOCK_SIZE=block, num_warps=4)

    return Plan(
        stages=[Stage("add", run, kernel=add_kernel, tiling={"BLOCK_SIZE": block, "num_warps": 4, "num_stages": 3},
                      grid_blocks=grid[0])],
        output=lambda: z,
    )


def build_v1(inputs, params):
    x, y, z = inputs["x"], inputs["y"], inputs["z"]
    n = params["n"]

    def grid(meta):
        return (triton.cdiv(n, meta["BLOCK_SIZE"]),)

    def run():
        return add_kernel_tuned[grid](x, y, z, n)

    def blocks():
        cfg = getattr(add_kernel_tuned, "best_config", None)
        return triton.cdiv(n, cfg.kwargs["BLOCK_SIZE"]) if cfg is not None else None

    return Plan(stages=[Stage("add", run, kernel=add_kernel_tuned, grid_blocks=blocks)], output=lambda: z)
