"""Triton code of calib_pow (imported only by the profiling worker).

One kernel for both versions; the constexpr ``FAST`` picks the power function:

    v0 (FAST=False): libdevice ``pow`` (``__nv_powf``): precise, a long FMA-pipe routine;
    v1 (FAST=True): libdevice ``fast_powf`` (``__nv_fast_powf``): exp2(e · log2 x) with MUFU.

The Triton interpreter cannot call libdevice: on the CPU (TRITON_INTERPRET=1) both versions use
exp2(e · log2 x) in numpy, so the CPU tests check the kernel's structure and the chain, not the
approximation error (checked by the profiler's correctness run on the GPU).
"""

import os

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import EXPONENT, SCALE

BLOCK = 1024  # elements per program: 8 per thread at 4 warps (8 independent chains)
WARPS = 4

if os.environ.get("TRITON_INTERPRET") == "1":

    @triton.jit
    def _pow(x, e, FAST: tl.constexpr):
        return tl.exp2(e * tl.log2(x))

else:
    from triton.language.extra.cuda import libdevice

    @triton.jit
    def _pow(x, e, FAST: tl.constexpr):
        if FAST:
            return libdevice.fast_powf(x, e)
        else:
            return libdevice.pow(x, e)


@triton.jit
def pow_chain_kernel(x_ptr, out_ptr, n, iters, e, h, FAST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask, other=0.0)
    for _ in range(iters):
        y = h * _pow(y + 1.0, e, FAST)
    tl.store(out_ptr + offs, y, mask=mask)


def _build(inputs, p, fast):
    x, out = inputs["x"], inputs["out"]
    n = x.numel()
    programs = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "num_stages": 1, "FAST": fast, "programs": programs}

    def run():
        return pow_chain_kernel[(programs,)](
            x, out, n, p["iters"], EXPONENT, SCALE, FAST=fast, BLOCK=BLOCK, num_warps=WARPS, num_stages=1
        )

    return Plan(
        [Stage("pow", run, kernel=pow_chain_kernel, tiling=tiling, grid_blocks=programs)], output=lambda: out
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
