"""Triton code of calib_precise_math (imported only by the profiling worker).

One kernel for both versions; the constexpr ``FAST`` picks the sine and cosine:

    v0 (FAST=False): libdevice ``sin``/``cos`` (``__nv_sinf``/``__nv_cosf``): range reduction and
        a minimax polynomial in FFMA/FMUL/integer instructions, correctly rounded to ~1 ulp;
        (``tl.sin``/``tl.cos`` lower to the same ``__nv_sinf``/``__nv_cosf`` in Triton 3.6-3.9);
    v1 (FAST=True): libdevice ``fast_sinf``/``fast_cosf`` (``sin.approx.f32``/``cos.approx.f32``):
        one MUFU.SIN/MUFU.COS on the XU pipe after an FMUL by 1/(2π).

The Triton interpreter cannot call libdevice: on the CPU (TRITON_INTERPRET=1) both versions use
``tl.sin``/``tl.cos`` (numpy's), so the CPU tests check the kernel's structure and the chain, not
the approximation error (checked by the profiler's correctness run on the GPU).
"""

import os

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import HALF

BLOCK = 1024  # elements per program: 8 per thread at 4 warps (8 independent chains)
WARPS = 4

if os.environ.get("TRITON_INTERPRET") == "1":

    @triton.jit
    def _sin(x, FAST: tl.constexpr):
        return tl.sin(x)

    @triton.jit
    def _cos(x, FAST: tl.constexpr):
        return tl.cos(x)

else:
    from triton.language.extra.cuda import libdevice

    @triton.jit
    def _sin(x, FAST: tl.constexpr):
        if FAST:
            return libdevice.fast_sinf(x)
        else:
            return libdevice.sin(x)

    @triton.jit
    def _cos(x, FAST: tl.constexpr):
        if FAST:
            return libdevice.fast_cosf(x)
        else:
            return libdevice.cos(x)


@triton.jit
def trig_chain_kernel(x_ptr, out_ptr, n, iters, half, FAST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask, other=0.0)
    for _ in range(iters):
        y = half * _sin(y, FAST) + half * _cos(y, FAST)
    tl.store(out_ptr + offs, y, mask=mask)


def _build(inputs, p, fast):
    x, out = inputs["x"], inputs["out"]
    n = x.numel()
    programs = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "num_stages": 1, "FAST": fast, "programs": programs}

    def run():
        return trig_chain_kernel[(programs,)](x, out, n, p["iters"], HALF, FAST=fast, BLOCK=BLOCK,
                                              num_warps=WARPS, num_stages=1)

    return Plan([Stage("trig", run, kernel=trig_chain_kernel, tiling=tiling, grid_blocks=programs)],
                output=lambda: out)


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
