"""Triton code of calib_so3_taylor (imported only by the profiling worker).

taylor_kernel (v0): R = sum_{k=0..TERMS} K^k / k! with K = [w]x the skew matrix of w, the term M_k = M_(k-1) K / k
(K's entries scaled by 1 / k, then the 3x3 product with the skew matrix: two products a entry), R += M_k;
TERMS = 30, unrolled (tl.static_range).
rodrigues_kernel (v1): t^2 = w.w, t = sqrt(t^2), a = sin t / t, b = (1 - cos t) / t^2 (a = 1 - t^2 / 6,
b = 1 / 2 - t^2 / 24 for t^2 < 1e-6), R = cos t I + a K + b w w^T.

W [3, B] fp16 element-major, R [9, B] fp16 element-major (entry (r, c) at R[3 r + c, b]); one rotation a thread.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS, TERMS = 512, 4, 30


@triton.jit
def _store9(o_ptr, n, i, m, r00, r01, r02, r10, r11, r12, r20, r21, r22):
    tl.store(o_ptr + 0 * n + i, r00.to(tl.float16), mask=m)
    tl.store(o_ptr + 1 * n + i, r01.to(tl.float16), mask=m)
    tl.store(o_ptr + 2 * n + i, r02.to(tl.float16), mask=m)
    tl.store(o_ptr + 3 * n + i, r10.to(tl.float16), mask=m)
    tl.store(o_ptr + 4 * n + i, r11.to(tl.float16), mask=m)
    tl.store(o_ptr + 5 * n + i, r12.to(tl.float16), mask=m)
    tl.store(o_ptr + 6 * n + i, r20.to(tl.float16), mask=m)
    tl.store(o_ptr + 7 * n + i, r21.to(tl.float16), mask=m)
    tl.store(o_ptr + 8 * n + i, r22.to(tl.float16), mask=m)


@triton.jit
def taylor_kernel(w_ptr, o_ptr, n, BLOCK: tl.constexpr, TERMS: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(w_ptr + 0 * n + i, mask=m, other=0.0).to(tl.float32)
    y = tl.load(w_ptr + 1 * n + i, mask=m, other=0.0).to(tl.float32)
    z = tl.load(w_ptr + 2 * n + i, mask=m, other=0.0).to(tl.float32)
    zero = tl.zeros((BLOCK,), tl.float32)
    one = zero + 1.0
    # M = I (the k = 0 term), R = I
    m00, m01, m02 = one, zero, zero
    m10, m11, m12 = zero, one, zero
    m20, m21, m22 = zero, zero, one
    r00, r01, r02 = one, zero, zero
    r10, r11, r12 = zero, one, zero
    r20, r21, r22 = zero, zero, one
    for k in tl.static_range(1, TERMS + 1):
        # K / k = [[0, -zk, yk], [zk, 0, -xk], [-yk, xk, 0]]
        xk = x * (1.0 / k)
        yk = y * (1.0 / k)
        zk = z * (1.0 / k)
        n00 = m01 * zk - m02 * yk
        n01 = m02 * xk - m00 * zk
        n02 = m00 * yk - m01 * xk
        n10 = m11 * zk - m12 * yk
        n11 = m12 * xk - m10 * zk
        n12 = m10 * yk - m11 * xk
        n20 = m21 * zk - m22 * yk
        n21 = m22 * xk - m20 * zk
        n22 = m20 * yk - m21 * xk
        m00, m01, m02 = n00, n01, n02
        m10, m11, m12 = n10, n11, n12
        m20, m21, m22 = n20, n21, n22
        r00 += m00
        r01 += m01
        r02 += m02
        r10 += m10
        r11 += m11
        r12 += m12
        r20 += m20
        r21 += m21
        r22 += m22
    _store9(o_ptr, n, i, m, r00, r01, r02, r10, r11, r12, r20, r21, r22)


@triton.jit
def rodrigues_kernel(w_ptr, o_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(w_ptr + 0 * n + i, mask=m, other=0.0).to(tl.float32)
    y = tl.load(w_ptr + 1 * n + i, mask=m, other=0.0).to(tl.float32)
    z = tl.load(w_ptr + 2 * n + i, mask=m, other=0.0).to(tl.float32)
    t2 = x * x + y * y + z * z
    small = t2 < 1e-6
    ts = tl.where(small, 1.0, tl.sqrt(t2))
    s = tl.sin(ts)
    c = tl.cos(ts)
    a = tl.where(small, 1.0 - t2 * (1.0 / 6.0), s / ts)
    b = tl.where(small, 0.5 - t2 * (1.0 / 24.0), (1.0 - c) / (ts * ts))
    c = tl.where(small, 1.0 - 0.5 * t2, c)
    bx = b * x
    by = b * y
    bz = b * z
    _store9(
        o_ptr,
        n,
        i,
        m,
        c + bx * x,
        by * x - a * z,
        bz * x + a * y,
        bx * y + a * z,
        c + by * y,
        bz * y - a * x,
        bx * z - a * y,
        by * z + a * x,
        c + bz * z,
    )


def _build(kernel, stage, extra):
    def build(inputs, params):
        w, out = inputs["W"], inputs["out"]
        n = params["B"]
        g = triton.cdiv(n, BLOCK)

        def run():
            return kernel[(g,)](w, out, n, BLOCK=BLOCK, num_warps=WARPS, **extra)

        tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": [g], **extra}
        return Plan([Stage(stage, run, kernel=kernel, tiling=tiling, grid_blocks=g)], output=lambda: out)

    return build


build_v0 = _build(taylor_kernel, "so3_taylor", {"TERMS": TERMS})
build_v1 = _build(rodrigues_kernel, "so3_rodrigues", {})
