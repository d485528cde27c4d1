import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage


@triton.jit
def sum_atomic_each_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(x_ptr + i, mask=mask, other=0.0)
    tl.atomic_add(out_ptr + tl.zeros([BLOCK], dtype=tl.int32), x, mask=mask)  # n atomics on one address


@triton.jit
def sum_block_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


def build(inputs, p, per_element):
    x, out = inputs["x"], inputs["out"]
    n = p["n"]
    block = 4096
    grid = (triton.cdiv(n, block),)
    kernel = sum_atomic_each_kernel if per_element else sum_block_kernel

    def run():
        out.zero_()
        return kernel[grid](x, out, n, BLOCK=block, num_warps=4)

    return Plan([Stage("sum", run, kernel=kernel, tiling={"BLOCK": block, "num_warps": 4}, grid_blocks=grid[0])],
                output=lambda: out)
