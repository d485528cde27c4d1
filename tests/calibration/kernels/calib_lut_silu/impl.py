"""Triton code of calib_lut_silu (imported only by the profiling worker).

lut_kernel (v0): u = (clamp(x, -8, 8) + 8) * 256, j = min(floor(u), 4095), f = u - j, y = T[j] + f (T[j + 1] -
T[j]) (two gathers into the 4097-entry fp32 table); x > 8 gives x, x < -8 gives 0.
silu_kernel (v1): y = x * sigmoid(x) = x / (1 + exp(-x)) in fp32.

One element a lane, BLOCK elements a program, fp16 in and out.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 1024, 4


@triton.jit
def lut_kernel(x_ptr, t_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=0.0).to(tl.float32)
    u = (tl.minimum(tl.maximum(x, -8.0), 8.0) + 8.0) * 256.0
    j = tl.minimum(u.to(tl.int32), 4095)
    f = u - j.to(tl.float32)
    t0 = tl.load(t_ptr + j, mask=m, other=0.0)
    t1 = tl.load(t_ptr + j + 1, mask=m, other=0.0)
    y = t0 + f * (t1 - t0)
    y = tl.where(x > 8.0, x, tl.where(x < -8.0, 0.0, y))
    tl.store(y_ptr + i, y.to(tl.float16), mask=m)


@triton.jit
def silu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=0.0).to(tl.float32)
    y = x / (1.0 + tl.exp(-x))
    tl.store(y_ptr + i, y.to(tl.float16), mask=m)


def _build(v0):
    def build(inputs, params):
        x, out = inputs["X"], inputs["out"]
        n = params["N"]
        g = triton.cdiv(n, BLOCK)
        if v0:
            table = inputs["TABLE"]

            def run():
                return lut_kernel[(g,)](x, table, out, n, BLOCK=BLOCK, num_warps=WARPS)

            kernel, stage = lut_kernel, "silu_lut"
        else:

            def run():
                return silu_kernel[(g,)](x, out, n, BLOCK=BLOCK, num_warps=WARPS)

            kernel, stage = silu_kernel, "silu"
        tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": [g]}
        return Plan([Stage(stage, run, kernel=kernel, tiling=tiling, grid_blocks=g)], output=lambda: out)

    return build


build_v0 = _build(True)
build_v1 = _build(False)
