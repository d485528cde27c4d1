"""Triton code of calib_gcd_subtract (imported only by the profiling worker).

One pair a lane, BLOCK pairs a program, a data-independent loop (a branch-free kernel's loop runs to its
worst case; a pair already done stays fixed).
subtract_kernel (v0): STEPS steps of a, b = a - b if a > b, b - a if b > a (equal: done, gcd = a).
remainder_kernel (v1): STEPS steps of a, b = b, a mod b while b != 0 (done: gcd = a).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 128, 4


@triton.jit
def subtract_kernel(a_ptr, b_ptr, o_ptr, L, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < L
    a = tl.load(a_ptr + offs, mask=mask, other=1)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    for _ in range(STEPS):
        a_gt = a > b
        b_gt = b > a
        a = tl.where(a_gt, a - b, a)
        b = tl.where(b_gt, b - a, b)
    tl.store(o_ptr + offs, a, mask=mask)


@triton.jit
def remainder_kernel(a_ptr, b_ptr, o_ptr, L, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < L
    a = tl.load(a_ptr + offs, mask=mask, other=1)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    for _ in range(STEPS):
        nz = b != 0
        r = a % tl.where(nz, b, 1)
        a = tl.where(nz, b, a)
        b = tl.where(nz, r, 0)
    tl.store(o_ptr + offs, a, mask=mask)


def _lame_steps(nmax):
    """Lamé: the remainder form takes at most k steps where F(k + 2) > the larger value (Fibonacci), +1 spare."""
    f0, f1, k = 1, 2, 1
    while f1 < nmax:
        f0, f1, k = f1, f0 + f1, k + 1
    return k + 1


def _build(inputs, params, name, kernel, steps):
    a, b, out = inputs["a"], inputs["b"], inputs["out"]
    length = params["L"]
    grid = triton.cdiv(length, BLOCK)

    def run():
        return kernel[(grid,)](a, b, out, length, STEPS=steps, BLOCK=BLOCK, num_warps=WARPS)

    st = Stage(
        name,
        run,
        kernel=kernel,
        tiling={"BLOCK": BLOCK, "STEPS": steps, "grid": [grid]},
        grid_blocks=grid,
    )
    return Plan([st], output=lambda: out)


def build_v0(inputs, params):
    return _build(inputs, params, "gcd_subtract", subtract_kernel, params["NMAX"] - 2)


def build_v1(inputs, params):
    return _build(inputs, params, "gcd_remainder", remainder_kernel, _lame_steps(params["NMAX"]))
