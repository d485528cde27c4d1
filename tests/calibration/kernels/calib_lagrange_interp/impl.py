"""Triton code of calib_lagrange_interp (imported only by the profiling worker).

lagrange_kernel (v0): 1024 points a program; for each node j the product over k != j of (t - x_k) (two loops,
k < j and k > j), times y_j / prod_k (x_j - x_k) (scalars), summed over j.
bary_kernel (v1): 1024 points a program; per node d = t - x_j, q = w_j / d, the sums of q y_j and q, a point
equal to a node given that node's value; the quotient of the sums at the end.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 1024, 4


@triton.jit
def lagrange_kernel(t_ptr, x_ptr, y_ptr, o_ptr, P, NODES: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < P
    t = tl.load(t_ptr + offs, mask=ok, other=0.0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for j in range(NODES):
        xj = tl.load(x_ptr + j)
        num = tl.zeros([BLOCK], dtype=tl.float32) + 1.0
        den = xj * 0.0 + 1.0
        for k in range(0, j):
            xk = tl.load(x_ptr + k)
            num = num * (t - xk)
            den = den * (xj - xk)
        for k in range(j + 1, NODES):
            xk = tl.load(x_ptr + k)
            num = num * (t - xk)
            den = den * (xj - xk)
        acc += (tl.load(y_ptr + j) / den) * num
    tl.store(o_ptr + offs, acc, mask=ok)


@triton.jit
def bary_kernel(t_ptr, x_ptr, y_ptr, w_ptr, o_ptr, P, NODES: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < P
    t = tl.load(t_ptr + offs, mask=ok, other=0.0)
    num = tl.zeros([BLOCK], dtype=tl.float32)
    den = tl.zeros([BLOCK], dtype=tl.float32)
    yhit = tl.zeros([BLOCK], dtype=tl.float32)
    nhit = tl.zeros([BLOCK], dtype=tl.int32)
    for j in range(NODES):
        xj = tl.load(x_ptr + j)
        yj = tl.load(y_ptr + j)
        wj = tl.load(w_ptr + j)
        d = t - xj
        exact = d == 0.0
        q = wj / tl.where(exact, 1.0, d)
        num += q * yj
        den += q
        yhit = tl.where(exact, yj, yhit)
        nhit += exact.to(tl.int32)
    tl.store(o_ptr + offs, tl.where(nhit > 0, yhit, num / den), mask=ok)


def build_v0(inputs, params):
    t, x, y, out = inputs["t"], inputs["x"], inputs["y"], inputs["out"]
    pts, n = params["P"], params["NODES"]
    grid = (triton.cdiv(pts, BLOCK),)

    def run():
        return lagrange_kernel[grid](t, x, y, out, pts, NODES=n, BLOCK=BLOCK, num_warps=WARPS)

    st = Stage(
        "lagrange",
        run,
        kernel=lagrange_kernel,
        tiling={"BLOCK": BLOCK, "grid": list(grid)},
        grid_blocks=grid[0],
    )
    return Plan([st], output=lambda: out)


def build_v1(inputs, params):
    t, x, y, w, out = inputs["t"], inputs["x"], inputs["y"], inputs["w"], inputs["out"]
    pts, n = params["P"], params["NODES"]
    grid = (triton.cdiv(pts, BLOCK),)

    def run():
        return bary_kernel[grid](t, x, y, w, out, pts, NODES=n, BLOCK=BLOCK, num_warps=WARPS)

    st = Stage(
        "barycentric",
        run,
        kernel=bary_kernel,
        tiling={"BLOCK": BLOCK, "grid": list(grid)},
        grid_blocks=grid[0],
    )
    return Plan([st], output=lambda: out)
