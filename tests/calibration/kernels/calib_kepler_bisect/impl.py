"""Triton code of calib_kepler_bisect (imported only by the profiling worker).

One program per BLOCK = 1024 orbits, 4 warps:

    v0: bisect_kernel: lo, hi = M - e, M + e; 48 times: mid = (lo + hi) / 2; f = mid - e sin(mid) - M;
        lo, hi = where(f < 0, (mid, hi), (lo, mid)); E = (lo + hi) / 2;
    v1: newton_kernel: E = M + 0.85 e sign(sin M); 6 times: E -= (E - e sin E - M) / (1 - e cos E).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 1024, 4
BISECT_STEPS, NEWTON_STEPS = 48, 6


@triton.jit
def bisect_kernel(m_ptr, e_ptr, out_ptr, n, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    m = tl.load(m_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    e = tl.load(e_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    lo = m - e
    hi = m + e
    for _ in range(STEPS):
        mid = 0.5 * (lo + hi)
        f = mid - e * tl.sin(mid) - m
        neg = f < 0
        lo = tl.where(neg, mid, lo)
        hi = tl.where(neg, hi, mid)
    tl.store(out_ptr + offs, 0.5 * (lo + hi), mask=mask)


@triton.jit
def newton_kernel(m_ptr, e_ptr, out_ptr, n, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    m = tl.load(m_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    e = tl.load(e_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.sin(m)
    E = m + tl.where(s > 0, 0.85, tl.where(s < 0, -0.85, 0.0)) * e
    for _ in range(STEPS):
        E = E - (E - e * tl.sin(E) - m) / (1.0 - e * tl.cos(E))
    tl.store(out_ptr + offs, E, mask=mask)


def _build(inputs, p, kernel, steps):
    m, e, out = inputs["M"], inputs["e"], inputs["out"]
    n = m.numel()
    grid = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "STEPS": steps, "num_warps": WARPS, "grid": [grid]}

    def run():
        return kernel[(grid,)](m, e, out, n, STEPS=steps, BLOCK=BLOCK, num_warps=WARPS)

    return Plan([Stage("kepler", run, kernel=kernel, tiling=tiling, grid_blocks=grid)], output=lambda: out)


def build_v0(inputs, p):
    return _build(inputs, p, bisect_kernel, BISECT_STEPS)


def build_v1(inputs, p):
    return _build(inputs, p, newton_kernel, NEWTON_STEPS)
