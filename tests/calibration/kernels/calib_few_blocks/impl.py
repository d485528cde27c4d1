import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage


@triton.jit
def axpb_loop_kernel(x_ptr, y_ptr, n, chunk, BLOCK: tl.constexpr):
    p = tl.program_id(0)
    start = p.to(tl.int64) * chunk
    for off in range(0, chunk, BLOCK):
        i = start + off + tl.arange(0, BLOCK)
        mask = (i < n) & (off + tl.arange(0, BLOCK) < chunk)
        x = tl.load(x_ptr + i, mask=mask)
        tl.store(y_ptr + i, x * 2.0 + 1.0, mask=mask)


@triton.jit
def axpb_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(x_ptr + i, mask=mask)
    tl.store(y_ptr + i, x * 2.0 + 1.0, mask=mask)


def build_v0(inputs, p):
    x, y = inputs["x"], inputs["y"]
    n, programs = p["n"], p["programs"]
    chunk = triton.cdiv(n, programs)
    chunk = triton.cdiv(chunk, 4096) * 4096

    def run():
        return axpb_loop_kernel[(programs,)](x, y, n, chunk, BLOCK=4096, num_warps=4)

    return Plan([Stage("axpb", run, kernel=axpb_loop_kernel, tiling={"BLOCK": 4096, "num_warps": 4},
                       grid_blocks=programs)], output=lambda: y)


def build_v1(inputs, p):
    x, y = inputs["x"], inputs["y"]
    n = p["n"]
    grid = (triton.cdiv(n, 4096),)

    def run():
        return axpb_kernel[grid](x, y, n, BLOCK=4096, num_warps=4)

    return Plan([Stage("axpb", run, kernel=axpb_kernel, tiling={"BLOCK": 4096, "num_warps": 4},
                       grid_blocks=grid[0])], output=lambda: y)
