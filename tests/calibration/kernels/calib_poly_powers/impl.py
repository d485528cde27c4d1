"""Triton code of calib_poly_powers (imported only by the profiling worker).

powers_kernel: one program per BLOCK elements, 4 warps: acc = c0; for k = 1..D: xk = 1, k multiplications
    xk *= x (a runtime inner loop), acc += c_k · xk;
horner_kernel: the same programs: acc = c_D; for k = D-1..0: acc = acc · x + c_k.

v0: powers; v1: horner. D is a runtime argument (the loops are not unrolled).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 1024, 4


@triton.jit
def powers_kernel(x_ptr, c_ptr, out_ptr, N, D, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < N
    x = tl.load(x_ptr + offs, mask=ok, other=0.0)
    acc = tl.zeros((BLOCK,), tl.float32) + tl.load(c_ptr)
    for k in range(1, D + 1):
        xk = tl.full((BLOCK,), 1.0, tl.float32)
        for _j in range(0, k):  # x**k from scratch for every term
            xk = xk * x
        acc += tl.load(c_ptr + k) * xk
    tl.store(out_ptr + offs, acc, mask=ok)


@triton.jit
def horner_kernel(x_ptr, c_ptr, out_ptr, N, D, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < N
    x = tl.load(x_ptr + offs, mask=ok, other=0.0)
    acc = tl.zeros((BLOCK,), tl.float32) + tl.load(c_ptr + D)
    for i in range(0, D):
        acc = acc * x + tl.load(c_ptr + (D - 1 - i))
    tl.store(out_ptr + offs, acc, mask=ok)


def _stage(name, kernel, inputs, params):
    n, d = params["N"], params["D"]
    grid = (triton.cdiv(n, BLOCK),)
    args = (inputs["x"], inputs["c"], inputs["out"], n, d)

    def run():
        return kernel[grid](*args, BLOCK=BLOCK, num_warps=WARPS)

    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": list(grid)}
    return Stage(name, run, kernel=kernel, tiling=tiling, grid_blocks=grid[0])


def build_v0(inputs, params):
    out = inputs["out"]
    return Plan([_stage("powers", powers_kernel, inputs, params)], output=lambda: out)


def build_v1(inputs, params):
    out = inputs["out"]
    return Plan([_stage("horner", horner_kernel, inputs, params)], output=lambda: out)
