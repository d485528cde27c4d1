"""Triton code of calib_dilated_holes (imported only by the profiling worker).

conv_kernel: a program a [BT, C] output tile; for tap j in [0, NTAP) the input rows t + (j - HALF) * STRIDE
(zero outside [0, T)) [BT, C] times the tap w[j] [C, C] by tl.dot, accumulated in fp32; two pipeline stages (2 x 64 KB of shared memory at C = 128) in both versions.
v0 runs it over the zero-expanded filter (NTAP 65, STRIDE 1, HALF 32), v1 over the real taps (NTAP 9,
STRIDE 8, HALF 4).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BT, WARPS, STAGES = 128, 4, 2


@triton.jit
def conv_kernel(
    x_ptr, w_ptr, o_ptr, T, C: tl.constexpr, NTAP: tl.constexpr, STRIDE: tl.constexpr, BT: tl.constexpr
):
    rows = tl.program_id(0) * BT + tl.arange(0, BT)
    cols = tl.arange(0, C)
    acc = tl.zeros([BT, C], dtype=tl.float32)
    for j in range(NTAP):
        src = rows + (j - (NTAP - 1) // 2) * STRIDE
        ok = (src >= 0) & (src < T)
        x = tl.load(x_ptr + src[:, None] * C + cols[None, :], mask=ok[:, None], other=0.0)
        w = tl.load(w_ptr + j * C * C + cols[:, None] * C + cols[None, :])
        acc = tl.dot(x, w, acc)
    tl.store(o_ptr + rows[:, None] * C + cols[None, :], acc, mask=(rows < T)[:, None])


def _build(inputs, params, name, w, ntap, stride):
    x, out = inputs["X"], inputs["out"]
    t, c = params["T"], params["C"]
    grid = triton.cdiv(t, BT)

    def run():
        return conv_kernel[(grid,)](
            x, w, out, t, C=c, NTAP=ntap, STRIDE=stride, BT=BT, num_warps=WARPS, num_stages=STAGES
        )

    st = Stage(
        name,
        run,
        kernel=conv_kernel,
        tiling={"BT": BT, "C": c, "NTAP": ntap, "STRIDE": stride, "grid": [grid]},
        grid_blocks=grid,
    )
    return Plan([st], output=lambda: out)


def build_v0(inputs, params):
    return _build(inputs, params, "conv_holes", inputs["W_holes"], inputs["W_holes"].shape[0], 1)


def build_v1(inputs, params):
    return _build(inputs, params, "conv_dilated", inputs["W"], inputs["W"].shape[0], 8)
