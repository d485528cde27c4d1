"""Triton code of calib_fourier_terms (imported only by the profiling worker).

One kernel for both versions, a program of 4 warps per BLOCK = 1024 points, a runtime loop over the K
harmonics, the terms chosen by a constexpr:

    v0: RECURRENCE=False: s, c = tl.sin(k·x), tl.cos(k·x) for every k;
    v1: RECURRENCE=True: s1, c1 = tl.sin(x), tl.cos(x) once, (s, c) <- (s·c1 + c·s1, c·c1 - s·s1).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK = 1024
WARPS = 4


@triton.jit
def series_kernel(x_ptr, a_ptr, b_ptr, out_ptr, N, K, BLOCK: tl.constexpr, RECURRENCE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < N
    x = tl.load(x_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    s1 = tl.sin(x)
    c1 = tl.cos(x)
    s = tl.zeros((BLOCK,), dtype=tl.float32)  # sin(0 x), cos(0 x)
    c = tl.full((BLOCK,), 1.0, dtype=tl.float32)
    for k in range(K):
        ak = tl.load(a_ptr + k)
        bk = tl.load(b_ptr + k)
        if RECURRENCE:
            s, c = s * c1 + c * s1, c * c1 - s * s1
            sk = s
            ck = c
        else:
            kx = x * (k + 1)
            sk = tl.sin(kx)
            ck = tl.cos(kx)
        acc += ak * sk + bk * ck
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=ok)


def _build(inputs, p, recurrence):
    x, a, b, out = inputs["x"], inputs["a"], inputs["b"], inputs["out"]
    n, k = x.numel(), a.numel()
    grid = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "RECURRENCE": recurrence, "num_warps": WARPS, "grid": [grid]}

    def run():
        return series_kernel[(grid,)](x, a, b, out, n, k, BLOCK=BLOCK, RECURRENCE=recurrence, num_warps=WARPS)

    return Plan(
        [Stage("series", run, kernel=series_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
