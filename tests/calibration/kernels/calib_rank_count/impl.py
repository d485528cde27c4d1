"""Triton code of calib_rank_count (imported only by the profiling worker).

Keys: an element's float bits (x > 0: ordered as the values) shifted into the high 32 bits, its column in the
low 32 (ties broken by index, as a stable sort).
count_kernel (v0): one program a row; for each column j, the key of x[j] (a scalar load) compared with every
element's key, the count of keys below incremented.
sort_kernel (v1): one program a row; the keys sorted (tl.sort), the column in each sorted key's low bits, the
sorted position stored there.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

WARPS = 8


@triton.jit
def count_kernel(x_ptr, o_ptr, N: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * N
    i = tl.arange(0, N)
    xi = tl.load(x_ptr + base + i)
    ki = (xi.to(tl.int32, bitcast=True).to(tl.int64) << 32) + i.to(tl.int64)
    rank = tl.zeros([N], dtype=tl.int32)
    for j in range(N):
        xj = tl.load(x_ptr + base + j)
        kj = (xj.to(tl.int32, bitcast=True).to(tl.int64) << 32) + j
        rank += (kj < ki).to(tl.int32)
    tl.store(o_ptr + base + i, rank)


@triton.jit
def sort_kernel(x_ptr, o_ptr, N: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * N
    i = tl.arange(0, N)
    xi = tl.load(x_ptr + base + i)
    ki = (xi.to(tl.int32, bitcast=True).to(tl.int64) << 32) + i.to(tl.int64)
    s = tl.sort(ki)
    col = s.to(tl.int32)  # the low 32 bits: the element's column
    tl.store(o_ptr + base + col, i)


def _build(kernel, name, inputs, params):
    x, out = inputs["x"], inputs["out"]
    m, n = params["M"], params["N"]
    grid = (m,)

    def run():
        return kernel[grid](x, out, N=n, num_warps=WARPS)

    st = Stage(name, run, kernel=kernel, tiling={"N": n, "grid": list(grid)}, grid_blocks=m)
    return Plan([st], output=lambda: out)


def build_v0(inputs, params):
    return _build(count_kernel, "rank_count", inputs, params)


def build_v1(inputs, params):
    return _build(sort_kernel, "rank_sort", inputs, params)
