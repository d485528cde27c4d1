"""Triton code of calib_spill (imported only by the profiling worker).

One kernel for both versions: a row softmax that holds the whole row (BLOCK = next_pow2(N)
fp32 values) in registers, one program per row. The versions differ only in ``num_warps``,
i.e. in how many threads share the row, hence in values held per thread:

    values per thread = BLOCK / (32 * num_warps)

    v0: 8192 / (32 * 1) = 256 values  > 255 registers a thread can have -> spills
    v1: 8192 / (32 * 4) =  64 values  (95 registers on an H100)           -> no spills
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

V0_WARPS = 1
V1_WARPS = 4


@triton.jit
def softmax_row_in_regs_kernel(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK: tl.constexpr):
    """y[row] = softmax(x[row]); the whole row lives in registers from the load to the store.

    The row is live across two reductions (max, then sum of exp) and the final scale, so the
    compiler cannot stream it: every value must be held (or spilled) until the store.
    """
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


def build(inputs, params, warps):
    x, y = inputs["x"], inputs["y"]
    M, N = params["M"], params["N"]
    block = triton.next_power_of_2(N)
    tiling = {"BLOCK": block, "num_warps": warps, "num_stages": 1, "programs": M,
              "values_per_thread": max(1, block // (32 * warps))}

    def run():
        return softmax_row_in_regs_kernel[(M,)](x, y, N, x.stride(0), y.stride(0), BLOCK=block,
                                                num_warps=warps, num_stages=1)

    return Plan(stages=[Stage("softmax", run, kernel=softmax_row_in_regs_kernel, tiling=tiling, grid_blocks=M)],
                output=lambda: y)


def build_v0(inputs, params):
    return build(inputs, params, V0_WARPS)


def build_v1(inputs, params):
    return build(inputs, params, V1_WARPS)
