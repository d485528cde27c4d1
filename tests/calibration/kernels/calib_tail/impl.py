import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage


@triton.jit
def iterate_kernel(x_ptr, out_ptr, n, iters, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(x_ptr + i, mask=mask, other=0.0)
    for _ in range(iters):
        x = x * 0.999 + 0.001
    tl.store(out_ptr + i, x, mask=mask)


def _build(inputs, p, block, warps):
    x, out = inputs["x"], inputs["out"]
    n, iters = x.numel(), p["iters"]
    block = max(16, block // p["shrink"])
    grid = (triton.cdiv(n, block),)

    def run():
        return iterate_kernel[grid](x, out, n, iters, BLOCK=block, num_warps=warps)

    return Plan([Stage("iterate", run, kernel=iterate_kernel, tiling={"BLOCK": block, "num_warps": warps},
                       grid_blocks=grid[0])], output=lambda: out)


def build_v0(inputs, p):
    return _build(inputs, p, 32768, 32)  # (SMs + SMs/10) programs


def build_v1(inputs, p):
    return _build(inputs, p, 4096, 4)  # 8x the programs, 8x smaller
