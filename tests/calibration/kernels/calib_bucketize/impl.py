"""Triton code of calib_bucketize (imported only by the profiling worker).

One kernel for both versions, a program of 4 warps per BLOCK = 1024 values, the search chosen by a constexpr:

    v0: BINARY=False: for j in range(NB): cnt += x >= b[j] (a runtime loop over the boundaries);
    v1: BINARY=True: STEPS halving steps, pos = where(b[pos + s - 1] <= x, pos + s, pos).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK = 1024
WARPS = 4


@triton.jit
def bucketize_kernel(
    x_ptr, b_ptr, out_ptr, N, NB, BLOCK: tl.constexpr, STEPS: tl.constexpr, BINARY: tl.constexpr
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < N
    x = tl.load(x_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    if BINARY:
        pos = tl.zeros((BLOCK,), dtype=tl.int32)
        for s in tl.static_range(STEPS):
            step = 1 << (STEPS - 1 - s)
            idx = pos + (step - 1)
            bj = tl.load(b_ptr + idx, mask=idx < NB, other=float("inf"))
            pos = tl.where(bj <= x, pos + step, pos)
        cnt = pos
    else:
        cnt = tl.zeros((BLOCK,), dtype=tl.int32)
        for j in range(NB):
            bj = tl.load(b_ptr + j)
            cnt += (x >= bj).to(tl.int32)
    tl.store(out_ptr + offs, cnt, mask=ok)


def _build(inputs, p, binary):
    from . import steps

    x, b, out = inputs["x"], inputs["b"], inputs["out"]
    n, nb = x.numel(), b.numel()
    st = steps(nb)
    grid = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "STEPS": st, "BINARY": binary, "num_warps": WARPS, "grid": [grid]}

    def run():
        return bucketize_kernel[(grid,)](
            x, b, out, n, nb, BLOCK=BLOCK, STEPS=st, BINARY=binary, num_warps=WARPS
        )

    return Plan(
        [Stage("bucketize", run, kernel=bucketize_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
