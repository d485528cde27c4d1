"""Triton code of calib_merge_by_sort (imported only by the profiling worker).

Both kernels: one program a row (4 warps), the row of N = n elements in registers.
sort_kernel (v0): y = tl.sort(x) (Triton's bitonic sorting network over the whole row).
merge_kernel (v1): the row loaded as [x[:N/2] ascending, x[N/2:] reversed] (a bitonic sequence), then for D = N/2,
N/4, ..., 1 a half-cleaner: the row viewed as [N / (2 D), 2, D], the two halves of each group taken apart (a sum
over the axis of 2 with the other half zeroed: exact), their minimum put first and their maximum second.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

WARPS = 4


@triton.jit
def sort_kernel(x_ptr, o_ptr, N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + offs)
    tl.store(o_ptr + row * N + offs, tl.sort(x))


@triton.jit
def _half_clean(x, N: tl.constexpr, D: tl.constexpr):
    y = tl.reshape(x, [N // (2 * D), 2, D])
    side = tl.arange(0, 2)[None, :, None]
    lo_in = tl.sum(tl.where(side == 0, y, 0.0), axis=1)
    hi_in = tl.sum(tl.where(side == 1, y, 0.0), axis=1)
    lo = tl.minimum(lo_in, hi_in)
    hi = tl.maximum(lo_in, hi_in)
    y = tl.where(side == 0, lo[:, None, :], hi[:, None, :])
    return tl.reshape(y, [N])


@triton.jit
def merge_kernel(x_ptr, o_ptr, N: tl.constexpr, LOG_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    j = tl.arange(0, N)
    src = tl.where(j < N // 2, j, N + N // 2 - 1 - j)  # the second run reversed: the row is bitonic
    x = tl.load(x_ptr + row * N + src)
    for s in tl.static_range(LOG_N):
        x = _half_clean(x, N, N >> (s + 1))
    tl.store(o_ptr + row * N + j, x)


def _build(inputs, params, name, run_fn, kernel):
    r, n = params["R"], params["n"]
    st = Stage(name, run_fn, kernel=kernel, tiling={"N": n, "num_warps": WARPS, "grid": [r]}, grid_blocks=r)
    return Plan([st], output=lambda: inputs["out"])


def build_v0(inputs, params):
    x, out = inputs["x"], inputs["out"]
    r, n = params["R"], params["n"]

    def run():
        return sort_kernel[(r,)](x, out, N=n, num_warps=WARPS)

    return _build(inputs, params, "sort_full", run, sort_kernel)


def build_v1(inputs, params):
    x, out = inputs["x"], inputs["out"]
    r, n = params["R"], params["n"]
    log_n = n.bit_length() - 1

    def run():
        return merge_kernel[(r,)](x, out, N=n, LOG_N=log_n, num_warps=WARPS)

    return _build(inputs, params, "merge_runs", run, merge_kernel)
