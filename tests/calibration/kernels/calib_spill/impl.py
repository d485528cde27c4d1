import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage


@triton.jit
def softmax_row_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * N + cols, e / tl.sum(e, axis=0), mask=mask)


def build(inputs, p, warps):
    x, out = inputs["x"], inputs["out"]
    M, N = p["M"], p["N"]
    block = triton.next_power_of_2(N)

    def run():
        return softmax_row_kernel[(M,)](x, out, N, BLOCK=block, num_warps=warps)

    return Plan([Stage("softmax", run, kernel=softmax_row_kernel, tiling={"BLOCK": block, "num_warps": warps},
                       grid_blocks=M)], output=lambda: out)
