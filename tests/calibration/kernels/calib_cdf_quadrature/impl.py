"""Triton code of calib_cdf_quadrature (imported only by the profiling worker).

simpson_kernel (v0): each program BLOCK elements; h = |x| / S, the density's 65 nodes summed with Simpson's
weights (S / 2 loop iterations of two exponentials, the last node's weight corrected after the loop), the
integral times 1 / sqrt(2 pi) added to or taken from 1/2 by the sign of x.
erf_kernel (v1): (1 + erf(x / sqrt 2)) / 2.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS, S = 1024, 4, 64
C = -0.7213475204444817  # -log2(e) / 2: exp(-t^2 / 2) = exp2(C t^2) (written as a literal in the kernel)
INV_SQRT_2PI = 0.3989422804014327


@triton.jit
def simpson_kernel(x_ptr, out_ptr, n, S: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    a = tl.abs(x)
    h = a / S
    acc = tl.full((BLOCK,), 1.0, tl.float32)  # the node t = 0, weight 1
    for j in range(S // 2):
        t1 = (j * 2.0 + 1.0) * h
        t2 = (j * 2.0 + 2.0) * h
        acc += 4.0 * tl.exp2(-0.7213475204444817 * t1 * t1) + 2.0 * tl.exp2(-0.7213475204444817 * t2 * t2)
    acc -= tl.exp2(-0.7213475204444817 * a * a)  # the last node's weight is 1, not 2
    half = acc * h * (0.3989422804014327 / 3.0)  # INV_SQRT_2PI: the compiled kernel reads no plain global
    tl.store(out_ptr + i, tl.where(x >= 0, 0.5 + half, 0.5 - half), mask=i < n)


@triton.jit
def erf_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    tl.store(out_ptr + i, 0.5 * (1.0 + tl.erf(x * 0.7071067811865476)), mask=i < n)


def _tiling(g, **kw):
    return {"BLOCK": BLOCK, "num_warps": WARPS, "grid": [g], **kw}


def build_v0(inputs, params):
    x, out = inputs["X"], inputs["out"]
    n = params["N"]
    g = triton.cdiv(n, BLOCK)

    def run():
        return simpson_kernel[(g,)](x, out, n, S=S, BLOCK=BLOCK, num_warps=WARPS)

    return Plan(
        [Stage("cdf_simpson", run, kernel=simpson_kernel, tiling=_tiling(g, S=S), grid_blocks=g)],
        output=lambda: out,
    )


def build_v1(inputs, params):
    x, out = inputs["X"], inputs["out"]
    n = params["N"]
    g = triton.cdiv(n, BLOCK)

    def run():
        return erf_kernel[(g,)](x, out, n, BLOCK=BLOCK, num_warps=WARPS)

    return Plan(
        [Stage("cdf_erf", run, kernel=erf_kernel, tiling=_tiling(g), grid_blocks=g)],
        output=lambda: out,
    )
