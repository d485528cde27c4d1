"""Triton code of calib_fp64 (imported only by the profiling worker).

One kernel for both versions; the constexpr ``DTYPE`` is the precision of the FMA chain
(tl.float64 in v0, tl.float32 in v1); the fp32 scalars a and c are promoted to the chain's type
(exact: both are exact in fp32). Same programs, warps and loads in both.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import A, C

BLOCK = 1024  # elements per program: 8 per thread at 4 warps (8 independent chains)
WARPS = 4
UNROLL = 16  # FMA steps per loop trip


@triton.jit
def chain_kernel(x_ptr, out_ptr, n, iters, a, c, DTYPE: tl.constexpr, BLOCK: tl.constexpr,
                 UNROLL: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(DTYPE)
    for _ in range(iters // UNROLL):
        for _u in tl.static_range(UNROLL):
            x = x * a + c
    for _ in range(iters % UNROLL):
        x = x * a + c
    tl.store(out_ptr + offs, x.to(tl.float32), mask=mask)


def _build(inputs, p, dtype, name):
    x, out = inputs["x"], inputs["out"]
    n = x.numel()
    programs = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "num_stages": 1, "UNROLL": UNROLL, "chain_dtype": name,
              "programs": programs}

    def run():
        return chain_kernel[(programs,)](x, out, n, p["iters"], A, C, DTYPE=dtype, BLOCK=BLOCK, UNROLL=UNROLL,
                                         num_warps=WARPS, num_stages=1)

    return Plan([Stage("iterate", run, kernel=chain_kernel, tiling=tiling, grid_blocks=programs)],
                output=lambda: out)


def build_v0(inputs, p):
    return _build(inputs, p, tl.float64, "float64")


def build_v1(inputs, p):
    return _build(inputs, p, tl.float32, "float32")
