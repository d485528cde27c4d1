"""Triton code of calib_rare_branch (imported only by the profiling worker).

Both versions 4 warps a program, BLOCK = 1024 values a program:

    v0: y = tl.where(|x| >= T, series(x), poly(x)): both operands evaluated for the whole tile;
    v1: poly(x) stored where |x| < T; the tail values' indices written to the program's slots of a scratch
        list (exclusive cumsum of the mask), a barrier, then series(x) for those only, SUB = 32 at a time.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import C1, C2, T

BLOCK, SUB, WARPS = 1024, 32, 4


@triton.jit
def _poly(x, C1: tl.constexpr, C2: tl.constexpr):
    x2 = x * x
    return x * (1.0 + x2 * (C1 + x2 * C2))


@triton.jit
def _series(x, L):
    x2 = x * x
    s = x2 / (1.0 + x2)
    acc = tl.full(x.shape, 1.0, tl.float32)
    for _ in range(1, L):
        acc = acc * s + 1.0
    return x * acc / L


@triton.jit
def two_path_v0(x_ptr, out_ptr, n, T, L, C1: tl.constexpr, C2: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    y = tl.where(tl.abs(x) >= T, _series(x, L), _poly(x, C1, C2))
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=m)


@triton.jit
def two_path_v1(
    x_ptr,
    out_ptr,
    idx_ptr,
    n,
    T,
    L,
    C1: tl.constexpr,
    C2: tl.constexpr,
    BLOCK: tl.constexpr,
    SUB: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    tail = (tl.abs(x) >= T) & m
    tl.store(out_ptr + offs, _poly(x, C1, C2).to(out_ptr.dtype.element_ty), mask=m & (tl.abs(x) < T))
    r = tail.to(tl.int32)
    slot = tl.cumsum(r, 0) - r
    cnt = tl.sum(r, 0)
    base = pid * BLOCK
    tl.store(idx_ptr + base + slot, offs, mask=tail)
    tl.debug_barrier()  # the program's stores to its slots visible to all its threads
    for s0 in range(0, cnt, SUB):
        j = s0 + tl.arange(0, SUB)
        mj = j < cnt
        i = tl.load(idx_ptr + base + j, mask=mj, other=0)
        xr = tl.load(x_ptr + i, mask=mj, other=0.0).to(tl.float32)
        tl.store(out_ptr + i, _series(xr, L).to(out_ptr.dtype.element_ty), mask=mj)


def _build(inputs, p, fixed):
    x, out, scratch = inputs["x"], inputs["out"], inputs["scratch"]
    n, L = x.numel(), p["L"]
    grid = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": [grid]}
    if fixed:
        tiling["SUB"] = SUB

    def run():
        if fixed:
            return two_path_v1[(grid,)](
                x, out, scratch, n, T, L, C1=C1, C2=C2, BLOCK=BLOCK, SUB=SUB, num_warps=WARPS
            )
        return two_path_v0[(grid,)](x, out, n, T, L, C1=C1, C2=C2, BLOCK=BLOCK, num_warps=WARPS)

    kernel = two_path_v1 if fixed else two_path_v0
    return Plan(
        [Stage("two_path", run, kernel=kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
