"""Triton code of calib_eig3_jacobi (imported only by the profiling worker).

jacobi_kernel (v0): SWEEPS cyclic sweeps over the pairs (0, 1), (0, 2), (1, 2) (unrolled): for a pair (p, q)
with off-diagonal entry a_pq, th = (a_qq - a_pp) / (2 a_pq), t = sign(th) / (|th| + sqrt(th^2 + 1)) (t = 0
where a_pq = 0), c = rsqrt(t^2 + 1), s = t c; a_pp -= t a_pq, a_qq += t a_pq, a_pq = 0, and for the third index
r: a_rp, a_rq = c a_rp - s a_rq, s a_rp + c a_rq. Then the diagonal sorted (min / max network).
analytic_kernel (v1): q = tr / 3, B = A - q I, p = sqrt(tr(B^2) / 6), r = det(B) / (2 p^3) clamped to [-1, 1],
phi = acos(r) / 3 (Abramowitz & Stegun 4.4.46), the largest q + 2 p cos(phi), the smallest q + 2 p cos(phi + 2 pi / 3), the middle 3 q minus
both (p = 0: all three q).

A [6, B] fp16 element-major (a00, a11, a22, a01, a02, a12), L [3, B] fp32 element-major, ascending; one matrix
a lane.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS, SWEEPS = 512, 4, 8


@triton.jit
def _rot(app, aqq, apq, arp, arq):
    """One Jacobi rotation zeroing a_pq: the new (a_pp, a_qq, a_rp, a_rq)."""
    nz = apq != 0.0
    th = (aqq - app) / tl.where(nz, 2.0 * apq, 1.0)
    t = 1.0 / (tl.abs(th) + tl.sqrt(th * th + 1.0))
    t = tl.where(th < 0.0, -t, t)
    t = tl.where(nz, t, 0.0)
    c = tl.math.rsqrt(t * t + 1.0)
    s = t * c
    return app - t * apq, aqq + t * apq, c * arp - s * arq, s * arp + c * arq


@triton.jit
def jacobi_kernel(a_ptr, o_ptr, n, BLOCK: tl.constexpr, SWEEPS: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    a00 = tl.load(a_ptr + 0 * n + i, mask=m, other=0.0).to(tl.float32)
    a11 = tl.load(a_ptr + 1 * n + i, mask=m, other=0.0).to(tl.float32)
    a22 = tl.load(a_ptr + 2 * n + i, mask=m, other=0.0).to(tl.float32)
    a01 = tl.load(a_ptr + 3 * n + i, mask=m, other=0.0).to(tl.float32)
    a02 = tl.load(a_ptr + 4 * n + i, mask=m, other=0.0).to(tl.float32)
    a12 = tl.load(a_ptr + 5 * n + i, mask=m, other=0.0).to(tl.float32)
    zero = tl.zeros((BLOCK,), tl.float32)
    for _ in tl.static_range(SWEEPS):
        # (p, q) = (0, 1), r = 2
        a00, a11, a02, a12 = _rot(a00, a11, a01, a02, a12)
        a01 = zero
        # (p, q) = (0, 2), r = 1
        a00, a22, a01, a12 = _rot(a00, a22, a02, a01, a12)
        a02 = zero
        # (p, q) = (1, 2), r = 0
        a11, a22, a01, a02 = _rot(a11, a22, a12, a01, a02)
        a12 = zero
    lo = tl.minimum(tl.minimum(a00, a11), a22)
    hi = tl.maximum(tl.maximum(a00, a11), a22)
    mid = tl.maximum(tl.minimum(a00, a11), tl.minimum(tl.maximum(a00, a11), a22))
    tl.store(o_ptr + 0 * n + i, lo, mask=m)
    tl.store(o_ptr + 1 * n + i, mid, mask=m)
    tl.store(o_ptr + 2 * n + i, hi, mask=m)


@triton.jit
def analytic_kernel(a_ptr, o_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    a00 = tl.load(a_ptr + 0 * n + i, mask=m, other=0.0).to(tl.float32)
    a11 = tl.load(a_ptr + 1 * n + i, mask=m, other=0.0).to(tl.float32)
    a22 = tl.load(a_ptr + 2 * n + i, mask=m, other=0.0).to(tl.float32)
    a01 = tl.load(a_ptr + 3 * n + i, mask=m, other=0.0).to(tl.float32)
    a02 = tl.load(a_ptr + 4 * n + i, mask=m, other=0.0).to(tl.float32)
    a12 = tl.load(a_ptr + 5 * n + i, mask=m, other=0.0).to(tl.float32)
    q = (a00 + a11 + a22) * (1.0 / 3.0)
    b0 = a00 - q
    b1 = a11 - q
    b2 = a22 - q
    p2 = (b0 * b0 + b1 * b1 + b2 * b2 + 2.0 * (a01 * a01 + a02 * a02 + a12 * a12)) * (1.0 / 6.0)
    p = tl.sqrt(p2)
    det = b0 * (b1 * b2 - a12 * a12) - a01 * (a01 * b2 - a12 * a02) + a02 * (a01 * a12 - b1 * a02)
    pos = p > 0.0
    ps = tl.where(pos, p, 1.0)
    r = tl.where(pos, det / (2.0 * ps * ps * ps), 0.0)
    r = tl.minimum(tl.maximum(r, -1.0), 1.0)
    # acos(r) by Abramowitz & Stegun 4.4.46 (|error| <= 2e-8): sqrt(1 - |r|) times a degree-7 polynomial
    ar = tl.abs(r)
    poly = -0.0012624911 * ar + 0.0066700901
    poly = poly * ar - 0.0170881256
    poly = poly * ar + 0.0308918810
    poly = poly * ar - 0.0501743046
    poly = poly * ar + 0.0889789874
    poly = poly * ar - 0.2145988016
    poly = poly * ar + 1.5707963050
    ac = tl.sqrt(1.0 - ar) * poly
    ac = tl.where(r < 0.0, 3.141592653589793 - ac, ac)
    phi = ac * (1.0 / 3.0)
    hi = q + 2.0 * p * tl.cos(phi)
    lo = q + 2.0 * p * tl.cos(phi + 2.0943951023931953)
    mid = 3.0 * q - hi - lo
    tl.store(o_ptr + 0 * n + i, lo, mask=m)
    tl.store(o_ptr + 1 * n + i, mid, mask=m)
    tl.store(o_ptr + 2 * n + i, hi, mask=m)


def _build(v0):
    def build(inputs, params):
        a, out = inputs["A"], inputs["out"]
        n = params["B"]
        g = triton.cdiv(n, BLOCK)
        if v0:

            def run():
                return jacobi_kernel[(g,)](a, out, n, BLOCK=BLOCK, SWEEPS=SWEEPS, num_warps=WARPS)

            kernel, stage = jacobi_kernel, "eig3_jacobi"
        else:

            def run():
                return analytic_kernel[(g,)](a, out, n, BLOCK=BLOCK, num_warps=WARPS)

            kernel, stage = analytic_kernel, "eig3_analytic"
        tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": [g]}
        return Plan([Stage(stage, run, kernel=kernel, tiling=tiling, grid_blocks=g)], output=lambda: out)

    return build


build_v0 = _build(True)
build_v1 = _build(False)
