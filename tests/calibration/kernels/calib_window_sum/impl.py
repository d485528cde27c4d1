"""Triton code of calib_window_sum (imported only by the profiling worker).

One kernel for both versions, a program per row holding the whole row (BLOCK = next power of two of T),
the algorithm chosen by a constexpr:

    v0: RUNNING_SUM=False: acc += load(x[t - j]) for j in range(W) (masked at the row's start);
    v1: RUNNING_SUM=True: y = cumsum(x[t] - x[t - W]).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage


@triton.jit
def window_sum_kernel(x_ptr, y_ptr, T, W: tl.constexpr, RUNNING_SUM: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    t = tl.arange(0, BLOCK)
    x_row = x_ptr + row * T
    if RUNNING_SUM:
        enter = tl.load(x_row + t, mask=t < T, other=0.0)
        leave = tl.load(x_row + t - W, mask=(t >= W) & (t < T), other=0.0)
        acc = tl.cumsum(enter - leave, axis=0)
    else:
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for j in range(W):
            acc += tl.load(x_row + t - j, mask=(t >= j) & (t < T), other=0.0)
    tl.store(y_ptr + row * T + t, acc, mask=t < T)


def _build(inputs, p, running_sum):
    x, y = inputs["x"], inputs["y"]
    r, t = x.shape
    block = triton.next_power_of_2(t)
    warps = 8 if block >= 4096 else 4
    tiling = {"BLOCK": block, "W": p["W"], "RUNNING_SUM": running_sum, "num_warps": warps, "grid": [r]}

    def run():
        return window_sum_kernel[(r,)](
            x, y, t, W=p["W"], RUNNING_SUM=running_sum, BLOCK=block, num_warps=warps
        )

    return Plan(
        [Stage("window_sum", run, kernel=window_sum_kernel, tiling=tiling, grid_blocks=r)],
        output=lambda: y,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
