"""Triton code of calib_philox_dropout (imported only by the profiling worker).

One kernel for both versions, BLOCK = 4096 elements per program, element i's random value output
(o + i) % 4 of Philox4x32-10 at counter (o + i) // 4; how it is computed chosen by a constexpr:

    v0: PER_COUNTER=False: tl.randint4x at each element's counter, one output selected per element;
    v1: PER_COUNTER=True: tl.randint4x once per counter (BLOCK // 4 of them), the four outputs interleaved.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK = 4096
WARPS = 4


@triton.jit(do_not_specialize=["seed", "offset"])
def dropout_kernel(
    x_ptr,
    out_ptr,
    n,
    seed,
    offset,
    P_INT: tl.constexpr,
    SCALE: tl.constexpr,
    PER_COUNTER: tl.constexpr,
    BLOCK: tl.constexpr,
):
    start = tl.program_id(0) * BLOCK
    i = start + tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(x_ptr + i, mask=mask, other=0.0)
    if PER_COUNTER:
        c = (offset + start) // 4 + tl.arange(0, BLOCK // 4)
        r0, r1, r2, r3 = tl.randint4x(seed, c)
        r = tl.interleave(tl.interleave(r0, r2), tl.interleave(r1, r3))
    else:
        o = offset + i
        r0, r1, r2, r3 = tl.randint4x(seed, o // 4)
        j = o % 4
        r = tl.where(j == 0, r0, tl.where(j == 1, r1, tl.where(j == 2, r2, r3)))
    keep = (r >> 9).to(tl.int32) >= P_INT
    y = tl.where(keep, x.to(tl.float32) * SCALE, 0.0)
    tl.store(out_ptr + i, y.to(out_ptr.dtype.element_ty), mask=mask)


def _build(inputs, p, per_counter):
    from . import OFFSET, P_DROP, P_INT, SEED

    x, out = inputs["x"], inputs["out"]
    n = x.numel()
    assert OFFSET % 4 == 0 and BLOCK % 4 == 0
    programs = triton.cdiv(n, BLOCK)
    scale = 1.0 / (1.0 - P_DROP)
    tiling = {"BLOCK": BLOCK, "PER_COUNTER": per_counter, "num_warps": WARPS, "grid": [programs]}

    def run():
        return dropout_kernel[(programs,)](
            x,
            out,
            n,
            SEED,
            OFFSET,
            P_INT=P_INT,
            SCALE=scale,
            PER_COUNTER=per_counter,
            BLOCK=BLOCK,
            num_warps=WARPS,
        )

    return Plan(
        [Stage("dropout", run, kernel=dropout_kernel, tiling=tiling, grid_blocks=programs)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
