"""Triton code of calib_fdiv (imported only by the profiling worker).

One kernel for both versions; the constexpr ``RECIP`` picks the step:

    v0 (RECIP=False): y = (y + x) / d with d = x + s (each element's own divisor, the same every
        step): an IEEE fp32 division per element per step (``tl.div_rn``: ``div.rn.f32``);
    v1 (RECIP=True): r = 1 / d once per element before the loop, y = (y + x) * r per step.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import DIVISOR

BLOCK = 1024  # elements per program: 8 per thread at 4 warps (8 independent chains)
WARPS = 4


@triton.jit
def div_chain_kernel(x_ptr, out_ptr, n, iters, s, RECIP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = x
    d = x + s
    if RECIP:
        r = 1.0 / d
        for _ in range(iters):
            y = (y + x) * r
    else:
        for _ in range(iters):
            y = tl.div_rn(y + x, d)
    tl.store(out_ptr + offs, y, mask=mask)


def _build(inputs, p, recip):
    x, out = inputs["x"], inputs["out"]
    n = x.numel()
    programs = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "num_stages": 1, "RECIP": recip, "programs": programs}

    def run():
        return div_chain_kernel[(programs,)](
            x, out, n, p["iters"], DIVISOR, RECIP=recip, BLOCK=BLOCK, num_warps=WARPS, num_stages=1
        )

    return Plan(
        [Stage("div", run, kernel=div_chain_kernel, tiling=tiling, grid_blocks=programs)], output=lambda: out
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
