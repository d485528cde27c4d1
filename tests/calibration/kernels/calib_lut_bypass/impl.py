"""Triton code of calib_lut_bypass (imported only by the profiling worker).

One kernel for both versions, a program of 4 warps per BLOCK = 2048 values; q and absmax loaded with
cache_modifier=".cg" in both, the table's cache operator chosen by a constexpr:

    v0: TABLE_CG=True: tl.load(code + q, cache_modifier=".cg") (ld.global.cg: the L2);
    v1: TABLE_CG=False: tl.load(code + q) (ld.global: L1 hits).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK = 2048
WARPS = 4


@triton.jit
def dequant_kernel(
    q_ptr, code_ptr, absmax_ptr, out_ptr, N, BLOCK: tl.constexpr, QBLOCK: tl.constexpr, TABLE_CG: tl.constexpr
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < N
    q = tl.load(q_ptr + offs, mask=ok, other=0, cache_modifier=".cg").to(tl.int32)
    scale = tl.load(absmax_ptr + offs // QBLOCK, mask=ok, other=0.0, cache_modifier=".cg")
    if TABLE_CG:
        v = tl.load(code_ptr + q, mask=ok, other=0.0, cache_modifier=".cg")
    else:
        v = tl.load(code_ptr + q, mask=ok, other=0.0)
    tl.store(out_ptr + offs, (v * scale).to(out_ptr.dtype.element_ty), mask=ok)


def _build(inputs, p, table_cg):
    from . import QBLOCK

    q, code, absmax, out = inputs["q"], inputs["code"], inputs["absmax"], inputs["out"]
    n = q.numel()
    grid = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "TABLE_CG": table_cg, "num_warps": WARPS, "grid": [grid]}

    def run():
        return dequant_kernel[(grid,)](
            q, code, absmax, out, n, BLOCK=BLOCK, QBLOCK=QBLOCK, TABLE_CG=table_cg, num_warps=WARPS
        )

    return Plan(
        [Stage("dequant", run, kernel=dequant_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, True)


def build_v1(inputs, p):
    return _build(inputs, p, False)
