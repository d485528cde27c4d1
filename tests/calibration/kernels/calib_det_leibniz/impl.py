"""Triton code of calib_det_leibniz (imported only by the profiling worker). Generated: the kernels' bodies are
straight-line code (written out by a short script from the two formulas, as a symbolic-algebra tool's output
is pasted into a kernel).

leibniz_kernel (v0): det A = sum over the 720 permutations s of sign(s) a[0, s0] a[1, s1] ... a[5, s5], each
term's product written out left to right, the terms in lexicographic order of the permutation.
minors_kernel (v1): the determinant by Laplace expansion along rows 0..5 with every minor computed once: the 15
2x2 minors of rows 0-1, the 20 3x3 minors of rows 0-2, the 15 4x4 of rows 0-3, the 6 5x5 of rows 0-4, then
row 5 (~190 multiply-adds).

A [36, B] fp16: element (r, c) of matrix b at A[6 r + c, b] (the batch stored element-major, every load
coalesced); out [B] fp32.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 128, 4  # one matrix a thread


@triton.jit
def leibniz_kernel(a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    a00 = tl.load(a_ptr + 0 * n + i, mask=m, other=0.0).to(tl.float32)
    a01 = tl.load(a_ptr + 1 * n + i, mask=m, other=0.0).to(tl.float32)
    a02 = tl.load(a_ptr + 2 * n + i, mask=m, other=0.0).to(tl.float32)
    a03 = tl.load(a_ptr + 3 * n + i, mask=m, other=0.0).to(tl.float32)
    a04 = tl.load(a_ptr + 4 * n + i, mask=m, other=0.0).to(tl.float32)
    a05 = tl.load(a_ptr + 5 * n + i, mask=m, other=0.0).to(tl.float32)
    a10 = tl.load(a_ptr + 6 * n + i, mask=m, other=0.0).to(tl.float32)
    a11 = tl.load(a_ptr + 7 * n + i, mask=m, other=0.0).to(tl.float32)
    a12 = tl.load(a_ptr + 8 * n + i, mask=m, other=0.0).to(tl.float32)
    a13 = tl.load(a_ptr + 9 * n + i, mask=m, other=0.0).to(tl.float32)
    a14 = tl.load(a_ptr + 10 * n + i, mask=m, other=0.0).to(tl.float32)
    a15 = tl.load(a_ptr + 11 * n + i, mask=m, other=0.0).to(tl.float32)
    a20 = tl.load(a_ptr + 12 * n + i, mask=m, other=0.0).to(tl.float32)
    a21 = tl.load(a_ptr + 13 * n + i, mask=m, other=0.0).to(tl.float32)
    a22 = tl.load(a_ptr + 14 * n + i, mask=m, other=0.0).to(tl.float32)
    a23 = tl.load(a_ptr + 15 * n + i, mask=m, other=0.0).to(tl.float32)
    a24 = tl.load(a_ptr + 16 * n + i, mask=m, other=0.0).to(tl.float32)
    a25 = tl.load(a_ptr + 17 * n + i, mask=m, other=0.0).to(tl.float32)
    a30 = tl.load(a_ptr + 18 * n + i, mask=m, other=0.0).to(tl.float32)
    a31 = tl.load(a_ptr + 19 * n + i, mask=m, other=0.0).to(tl.float32)
    a32 = tl.load(a_ptr + 20 * n + i, mask=m, other=0.0).to(tl.float32)
    a33 = tl.load(a_ptr + 21 * n + i, mask=m, other=0.0).to(tl.float32)
    a34 = tl.load(a_ptr + 22 * n + i, mask=m, other=0.0).to(tl.float32)
    a35 = tl.load(a_ptr + 23 * n + i, mask=m, other=0.0).to(tl.float32)
    a40 = tl.load(a_ptr + 24 * n + i, mask=m, other=0.0).to(tl.float32)
    a41 = tl.load(a_ptr + 25 * n + i, mask=m, other=0.0).to(tl.float32)
    a42 = tl.load(a_ptr + 26 * n + i, mask=m, other=0.0).to(tl.float32)
    a43 = tl.load(a_ptr + 27 * n + i, mask=m, other=0.0).to(tl.float32)
    a44 = tl.load(a_ptr + 28 * n + i, mask=m, other=0.0).to(tl.float32)
    a45 = tl.load(a_ptr + 29 * n + i, mask=m, other=0.0).to(tl.float32)
    a50 = tl.load(a_ptr + 30 * n + i, mask=m, other=0.0).to(tl.float32)
    a51 = tl.load(a_ptr + 31 * n + i, mask=m, other=0.0).to(tl.float32)
    a52 = tl.load(a_ptr + 32 * n + i, mask=m, other=0.0).to(tl.float32)
    a53 = tl.load(a_ptr + 33 * n + i, mask=m, other=0.0).to(tl.float32)
    a54 = tl.load(a_ptr + 34 * n + i, mask=m, other=0.0).to(tl.float32)
    a55 = tl.load(a_ptr + 35 * n + i, mask=m, other=0.0).to(tl.float32)
    d = a00 * a11 * a22 * a33 * a44 * a55
    d -= a00 * a11 * a22 * a33 * a45 * a54
    d -= a00 * a11 * a22 * a34 * a43 * a55
    d += a00 * a11 * a22 * a34 * a45 * a53
    d += a00 * a11 * a22 * a35 * a43 * a54
    d -= a00 * a11 * a22 * a35 * a44 * a53
    d -= a00 * a11 * a23 * a32 * a44 * a55
    d += a00 * a11 * a23 * a32 * a45 * a54
    d += a00 * a11 * a23 * a34 * a42 * a55
    d -= a00 * a11 * a23 * a34 * a45 * a52
    d -= a00 * a11 * a23 * a35 * a42 * a54
    d += a00 * a11 * a23 * a35 * a44 * a52
    d += a00 * a11 * a24 * a32 * a43 * a55
    d -= a00 * a11 * a24 * a32 * a45 * a53
    d -= a00 * a11 * a24 * a33 * a42 * a55
    d += a00 * a11 * a24 * a33 * a45 * a52
    d += a00 * a11 * a24 * a35 * a42 * a53
    d -= a00 * a11 * a24 * a35 * a43 * a52
    d -= a00 * a11 * a25 * a32 * a43 * a54
    d += a00 * a11 * a25 * a32 * a44 * a53
    d += a00 * a11 * a25 * a33 * a42 * a54
    d -= a00 * a11 * a25 * a33 * a44 * a52
    d -= a00 * a11 * a25 * a34 * a42 * a53
    d += a00 * a11 * a25 * a34 * a43 * a52
    d -= a00 * a12 * a21 * a33 * a44 * a55
    d += a00 * a12 * a21 * a33 * a45 * a54
    d += a00 * a12 * a21 * a34 * a43 * a55
    d -= a00 * a12 * a21 * a34 * a45 * a53
    d -= a00 * a12 * a21 * a35 * a43 * a54
    d += a00 * a12 * a21 * a35 * a44 * a53
    d += a00 * a12 * a23 * a31 * a44 * a55
    d -= a00 * a12 * a23 * a31 * a45 * a54
    d -= a00 * a12 * a23 * a34 * a41 * a55
    d += a00 * a12 * a23 * a34 * a45 * a51
    d += a00 * a12 * a23 * a35 * a41 * a54
    d -= a00 * a12 * a23 * a35 * a44 * a51
    d -= a00 * a12 * a24 * a31 * a43 * a55
    d += a00 * a12 * a24 * a31 * a45 * a53
    d += a00 * a12 * a24 * a33 * a41 * a55
    d -= a00 * a12 * a24 * a33 * a45 * a51
    d -= a00 * a12 * a24 * a35 * a41 * a53
    d += a00 * a12 * a24 * a35 * a43 * a51
    d += a00 * a12 * a25 * a31 * a43 * a54
    d -= a00 * a12 * a25 * a31 * a44 * a53
    d -= a00 * a12 * a25 * a33 * a41 * a54
    d += a00 * a12 * a25 * a33 * a44 * a51
    d += a00 * a12 * a25 * a34 * a41 * a53
    d -= a00 * a12 * a25 * a34 * a43 * a51
    d += a00 * a13 * a21 * a32 * a44 * a55
    d -= a00 * a13 * a21 * a32 * a45 * a54
    d -= a00 * a13 * a21 * a34 * a42 * a55
    d += a00 * a13 * a21 * a34 * a45 * a52
    d += a00 * a13 * a21 * a35 * a42 * a54
    d -= a00 * a13 * a21 * a35 * a44 * a52
    d -= a00 * a13 * a22 * a31 * a44 * a55
    d += a00 * a13 * a22 * a31 * a45 * a54
    d += a00 * a13 * a22 * a34 * a41 * a55
    d -= a00 * a13 * a22 * a34 * a45 * a51
    d -= a00 * a13 * a22 * a35 * a41 * a54
    d += a00 * a13 * a22 * a35 * a44 * a51
    d += a00 * a13 * a24 * a31 * a42 * a55
    d -= a00 * a13 * a24 * a31 * a45 * a52
    d -= a00 * a13 * a24 * a32 * a41 * a55
    d += a00 * a13 * a24 * a32 * a45 * a51
    d += a00 * a13 * a24 * a35 * a41 * a52
    d -= a00 * a13 * a24 * a35 * a42 * a51
    d -= a00 * a13 * a25 * a31 * a42 * a54
    d += a00 * a13 * a25 * a31 * a44 * a52
    d += a00 * a13 * a25 * a32 * a41 * a54
    d -= a00 * a13 * a25 * a32 * a44 * a51
    d -= a00 * a13 * a25 * a34 * a41 * a52
    d += a00 * a13 * a25 * a34 * a42 * a51
    d -= a00 * a14 * a21 * a32 * a43 * a55
    d += a00 * a14 * a21 * a32 * a45 * a53
    d += a00 * a14 * a21 * a33 * a42 * a55
    d -= a00 * a14 * a21 * a33 * a45 * a52
    d -= a00 * a14 * a21 * a35 * a42 * a53
    d += a00 * a14 * a21 * a35 * a43 * a52
    d += a00 * a14 * a22 * a31 * a43 * a55
    d -= a00 * a14 * a22 * a31 * a45 * a53
    d -= a00 * a14 * a22 * a33 * a41 * a55
    d += a00 * a14 * a22 * a33 * a45 * a51
    d += a00 * a14 * a22 * a35 * a41 * a53
    d -= a00 * a14 * a22 * a35 * a43 * a51
    d -= a00 * a14 * a23 * a31 * a42 * a55
    d += a00 * a14 * a23 * a31 * a45 * a52
    d += a00 * a14 * a23 * a32 * a41 * a55
    d -= a00 * a14 * a23 * a32 * a45 * a51
    d -= a00 * a14 * a23 * a35 * a41 * a52
    d += a00 * a14 * a23 * a35 * a42 * a51
    d += a00 * a14 * a25 * a31 * a42 * a53
    d -= a00 * a14 * a25 * a31 * a43 * a52
    d -= a00 * a14 * a25 * a32 * a41 * a53
    d += a00 * a14 * a25 * a32 * a43 * a51
    d += a00 * a14 * a25 * a33 * a41 * a52
    d -= a00 * a14 * a25 * a33 * a42 * a51
    d += a00 * a15 * a21 * a32 * a43 * a54
    d -= a00 * a15 * a21 * a32 * a44 * a53
    d -= a00 * a15 * a21 * a33 * a42 * a54
    d += a00 * a15 * a21 * a33 * a44 * a52
    d += a00 * a15 * a21 * a34 * a42 * a53
    d -= a00 * a15 * a21 * a34 * a43 * a52
    d -= a00 * a15 * a22 * a31 * a43 * a54
    d += a00 * a15 * a22 * a31 * a44 * a53
    d += a00 * a15 * a22 * a33 * a41 * a54
    d -= a00 * a15 * a22 * a33 * a44 * a51
    d -= a00 * a15 * a22 * a34 * a41 * a53
    d += a00 * a15 * a22 * a34 * a43 * a51
    d += a00 * a15 * a23 * a31 * a42 * a54
    d -= a00 * a15 * a23 * a31 * a44 * a52
    d -= a00 * a15 * a23 * a32 * a41 * a54
    d += a00 * a15 * a23 * a32 * a44 * a51
    d += a00 * a15 * a23 * a34 * a41 * a52
    d -= a00 * a15 * a23 * a34 * a42 * a51
    d -= a00 * a15 * a24 * a31 * a42 * a53
    d += a00 * a15 * a24 * a31 * a43 * a52
    d += a00 * a15 * a24 * a32 * a41 * a53
    d -= a00 * a15 * a24 * a32 * a43 * a51
    d -= a00 * a15 * a24 * a33 * a41 * a52
    d += a00 * a15 * a24 * a33 * a42 * a51
    d -= a01 * a10 * a22 * a33 * a44 * a55
    d += a01 * a10 * a22 * a33 * a45 * a54
    d += a01 * a10 * a22 * a34 * a43 * a55
    d -= a01 * a10 * a22 * a34 * a45 * a53
    d -= a01 * a10 * a22 * a35 * a43 * a54
    d += a01 * a10 * a22 * a35 * a44 * a53
    d += a01 * a10 * a23 * a32 * a44 * a55
    d -= a01 * a10 * a23 * a32 * a45 * a54
    d -= a01 * a10 * a23 * a34 * a42 * a55
    d += a01 * a10 * a23 * a34 * a45 * a52
    d += a01 * a10 * a23 * a35 * a42 * a54
    d -= a01 * a10 * a23 * a35 * a44 * a52
    d -= a01 * a10 * a24 * a32 * a43 * a55
    d += a01 * a10 * a24 * a32 * a45 * a53
    d += a01 * a10 * a24 * a33 * a42 * a55
    d -= a01 * a10 * a24 * a33 * a45 * a52
    d -= a01 * a10 * a24 * a35 * a42 * a53
    d += a01 * a10 * a24 * a35 * a43 * a52
    d += a01 * a10 * a25 * a32 * a43 * a54
    d -= a01 * a10 * a25 * a32 * a44 * a53
    d -= a01 * a10 * a25 * a33 * a42 * a54
    d += a01 * a10 * a25 * a33 * a44 * a52
    d += a01 * a10 * a25 * a34 * a42 * a53
    d -= a01 * a10 * a25 * a34 * a43 * a52
    d += a01 * a12 * a20 * a33 * a44 * a55
    d -= a01 * a12 * a20 * a33 * a45 * a54
    d -= a01 * a12 * a20 * a34 * a43 * a55
    d += a01 * a12 * a20 * a34 * a45 * a53
    d += a01 * a12 * a20 * a35 * a43 * a54
    d -= a01 * a12 * a20 * a35 * a44 * a53
    d -= a01 * a12 * a23 * a30 * a44 * a55
    d += a01 * a12 * a23 * a30 * a45 * a54
    d += a01 * a12 * a23 * a34 * a40 * a55
    d -= a01 * a12 * a23 * a34 * a45 * a50
    d -= a01 * a12 * a23 * a35 * a40 * a54
    d += a01 * a12 * a23 * a35 * a44 * a50
    d += a01 * a12 * a24 * a30 * a43 * a55
    d -= a01 * a12 * a24 * a30 * a45 * a53
    d -= a01 * a12 * a24 * a33 * a40 * a55
    d += a01 * a12 * a24 * a33 * a45 * a50
    d += a01 * a12 * a24 * a35 * a40 * a53
    d -= a01 * a12 * a24 * a35 * a43 * a50
    d -= a01 * a12 * a25 * a30 * a43 * a54
    d += a01 * a12 * a25 * a30 * a44 * a53
    d += a01 * a12 * a25 * a33 * a40 * a54
    d -= a01 * a12 * a25 * a33 * a44 * a50
    d -= a01 * a12 * a25 * a34 * a40 * a53
    d += a01 * a12 * a25 * a34 * a43 * a50
    d -= a01 * a13 * a20 * a32 * a44 * a55
    d += a01 * a13 * a20 * a32 * a45 * a54
    d += a01 * a13 * a20 * a34 * a42 * a55
    d -= a01 * a13 * a20 * a34 * a45 * a52
    d -= a01 * a13 * a20 * a35 * a42 * a54
    d += a01 * a13 * a20 * a35 * a44 * a52
    d += a01 * a13 * a22 * a30 * a44 * a55
    d -= a01 * a13 * a22 * a30 * a45 * a54
    d -= a01 * a13 * a22 * a34 * a40 * a55
    d += a01 * a13 * a22 * a34 * a45 * a50
    d += a01 * a13 * a22 * a35 * a40 * a54
    d -= a01 * a13 * a22 * a35 * a44 * a50
    d -= a01 * a13 * a24 * a30 * a42 * a55
    d += a01 * a13 * a24 * a30 * a45 * a52
    d += a01 * a13 * a24 * a32 * a40 * a55
    d -= a01 * a13 * a24 * a32 * a45 * a50
    d -= a01 * a13 * a24 * a35 * a40 * a52
    d += a01 * a13 * a24 * a35 * a42 * a50
    d += a01 * a13 * a25 * a30 * a42 * a54
    d -= a01 * a13 * a25 * a30 * a44 * a52
    d -= a01 * a13 * a25 * a32 * a40 * a54
    d += a01 * a13 * a25 * a32 * a44 * a50
    d += a01 * a13 * a25 * a34 * a40 * a52
    d -= a01 * a13 * a25 * a34 * a42 * a50
    d += a01 * a14 * a20 * a32 * a43 * a55
    d -= a01 * a14 * a20 * a32 * a45 * a53
    d -= a01 * a14 * a20 * a33 * a42 * a55
    d += a01 * a14 * a20 * a33 * a45 * a52
    d += a01 * a14 * a20 * a35 * a42 * a53
    d -= a01 * a14 * a20 * a35 * a43 * a52
    d -= a01 * a14 * a22 * a30 * a43 * a55
    d += a01 * a14 * a22 * a30 * a45 * a53
    d += a01 * a14 * a22 * a33 * a40 * a55
    d -= a01 * a14 * a22 * a33 * a45 * a50
    d -= a01 * a14 * a22 * a35 * a40 * a53
    d += a01 * a14 * a22 * a35 * a43 * a50
    d += a01 * a14 * a23 * a30 * a42 * a55
    d -= a01 * a14 * a23 * a30 * a45 * a52
    d -= a01 * a14 * a23 * a32 * a40 * a55
    d += a01 * a14 * a23 * a32 * a45 * a50
    d += a01 * a14 * a23 * a35 * a40 * a52
    d -= a01 * a14 * a23 * a35 * a42 * a50
    d -= a01 * a14 * a25 * a30 * a42 * a53
    d += a01 * a14 * a25 * a30 * a43 * a52
    d += a01 * a14 * a25 * a32 * a40 * a53
    d -= a01 * a14 * a25 * a32 * a43 * a50
    d -= a01 * a14 * a25 * a33 * a40 * a52
    d += a01 * a14 * a25 * a33 * a42 * a50
    d -= a01 * a15 * a20 * a32 * a43 * a54
    d += a01 * a15 * a20 * a32 * a44 * a53
    d += a01 * a15 * a20 * a33 * a42 * a54
    d -= a01 * a15 * a20 * a33 * a44 * a52
    d -= a01 * a15 * a20 * a34 * a42 * a53
    d += a01 * a15 * a20 * a34 * a43 * a52
    d += a01 * a15 * a22 * a30 * a43 * a54
    d -= a01 * a15 * a22 * a30 * a44 * a53
    d -= a01 * a15 * a22 * a33 * a40 * a54
    d += a01 * a15 * a22 * a33 * a44 * a50
    d += a01 * a15 * a22 * a34 * a40 * a53
    d -= a01 * a15 * a22 * a34 * a43 * a50
    d -= a01 * a15 * a23 * a30 * a42 * a54
    d += a01 * a15 * a23 * a30 * a44 * a52
    d += a01 * a15 * a23 * a32 * a40 * a54
    d -= a01 * a15 * a23 * a32 * a44 * a50
    d -= a01 * a15 * a23 * a34 * a40 * a52
    d += a01 * a15 * a23 * a34 * a42 * a50
    d += a01 * a15 * a24 * a30 * a42 * a53
    d -= a01 * a15 * a24 * a30 * a43 * a52
    d -= a01 * a15 * a24 * a32 * a40 * a53
    d += a01 * a15 * a24 * a32 * a43 * a50
    d += a01 * a15 * a24 * a33 * a40 * a52
    d -= a01 * a15 * a24 * a33 * a42 * a50
    d += a02 * a10 * a21 * a33 * a44 * a55
    d -= a02 * a10 * a21 * a33 * a45 * a54
    d -= a02 * a10 * a21 * a34 * a43 * a55
    d += a02 * a10 * a21 * a34 * a45 * a53
    d += a02 * a10 * a21 * a35 * a43 * a54
    d -= a02 * a10 * a21 * a35 * a44 * a53
    d -= a02 * a10 * a23 * a31 * a44 * a55
    d += a02 * a10 * a23 * a31 * a45 * a54
    d += a02 * a10 * a23 * a34 * a41 * a55
    d -= a02 * a10 * a23 * a34 * a45 * a51
    d -= a02 * a10 * a23 * a35 * a41 * a54
    d += a02 * a10 * a23 * a35 * a44 * a51
    d += a02 * a10 * a24 * a31 * a43 * a55
    d -= a02 * a10 * a24 * a31 * a45 * a53
    d -= a02 * a10 * a24 * a33 * a41 * a55
    d += a02 * a10 * a24 * a33 * a45 * a51
    d += a02 * a10 * a24 * a35 * a41 * a53
    d -= a02 * a10 * a24 * a35 * a43 * a51
    d -= a02 * a10 * a25 * a31 * a43 * a54
    d += a02 * a10 * a25 * a31 * a44 * a53
    d += a02 * a10 * a25 * a33 * a41 * a54
    d -= a02 * a10 * a25 * a33 * a44 * a51
    d -= a02 * a10 * a25 * a34 * a41 * a53
    d += a02 * a10 * a25 * a34 * a43 * a51
    d -= a02 * a11 * a20 * a33 * a44 * a55
    d += a02 * a11 * a20 * a33 * a45 * a54
    d += a02 * a11 * a20 * a34 * a43 * a55
    d -= a02 * a11 * a20 * a34 * a45 * a53
    d -= a02 * a11 * a20 * a35 * a43 * a54
    d += a02 * a11 * a20 * a35 * a44 * a53
    d += a02 * a11 * a23 * a30 * a44 * a55
    d -= a02 * a11 * a23 * a30 * a45 * a54
    d -= a02 * a11 * a23 * a34 * a40 * a55
    d += a02 * a11 * a23 * a34 * a45 * a50
    d += a02 * a11 * a23 * a35 * a40 * a54
    d -= a02 * a11 * a23 * a35 * a44 * a50
    d -= a02 * a11 * a24 * a30 * a43 * a55
    d += a02 * a11 * a24 * a30 * a45 * a53
    d += a02 * a11 * a24 * a33 * a40 * a55
    d -= a02 * a11 * a24 * a33 * a45 * a50
    d -= a02 * a11 * a24 * a35 * a40 * a53
    d += a02 * a11 * a24 * a35 * a43 * a50
    d += a02 * a11 * a25 * a30 * a43 * a54
    d -= a02 * a11 * a25 * a30 * a44 * a53
    d -= a02 * a11 * a25 * a33 * a40 * a54
    d += a02 * a11 * a25 * a33 * a44 * a50
    d += a02 * a11 * a25 * a34 * a40 * a53
    d -= a02 * a11 * a25 * a34 * a43 * a50
    d += a02 * a13 * a20 * a31 * a44 * a55
    d -= a02 * a13 * a20 * a31 * a45 * a54
    d -= a02 * a13 * a20 * a34 * a41 * a55
    d += a02 * a13 * a20 * a34 * a45 * a51
    d += a02 * a13 * a20 * a35 * a41 * a54
    d -= a02 * a13 * a20 * a35 * a44 * a51
    d -= a02 * a13 * a21 * a30 * a44 * a55
    d += a02 * a13 * a21 * a30 * a45 * a54
    d += a02 * a13 * a21 * a34 * a40 * a55
    d -= a02 * a13 * a21 * a34 * a45 * a50
    d -= a02 * a13 * a21 * a35 * a40 * a54
    d += a02 * a13 * a21 * a35 * a44 * a50
    d += a02 * a13 * a24 * a30 * a41 * a55
    d -= a02 * a13 * a24 * a30 * a45 * a51
    d -= a02 * a13 * a24 * a31 * a40 * a55
    d += a02 * a13 * a24 * a31 * a45 * a50
    d += a02 * a13 * a24 * a35 * a40 * a51
    d -= a02 * a13 * a24 * a35 * a41 * a50
    d -= a02 * a13 * a25 * a30 * a41 * a54
    d += a02 * a13 * a25 * a30 * a44 * a51
    d += a02 * a13 * a25 * a31 * a40 * a54
    d -= a02 * a13 * a25 * a31 * a44 * a50
    d -= a02 * a13 * a25 * a34 * a40 * a51
    d += a02 * a13 * a25 * a34 * a41 * a50
    d -= a02 * a14 * a20 * a31 * a43 * a55
    d += a02 * a14 * a20 * a31 * a45 * a53
    d += a02 * a14 * a20 * a33 * a41 * a55
    d -= a02 * a14 * a20 * a33 * a45 * a51
    d -= a02 * a14 * a20 * a35 * a41 * a53
    d += a02 * a14 * a20 * a35 * a43 * a51
    d += a02 * a14 * a21 * a30 * a43 * a55
    d -= a02 * a14 * a21 * a30 * a45 * a53
    d -= a02 * a14 * a21 * a33 * a40 * a55
    d += a02 * a14 * a21 * a33 * a45 * a50
    d += a02 * a14 * a21 * a35 * a40 * a53
    d -= a02 * a14 * a21 * a35 * a43 * a50
    d -= a02 * a14 * a23 * a30 * a41 * a55
    d += a02 * a14 * a23 * a30 * a45 * a51
    d += a02 * a14 * a23 * a31 * a40 * a55
    d -= a02 * a14 * a23 * a31 * a45 * a50
    d -= a02 * a14 * a23 * a35 * a40 * a51
    d += a02 * a14 * a23 * a35 * a41 * a50
    d += a02 * a14 * a25 * a30 * a41 * a53
    d -= a02 * a14 * a25 * a30 * a43 * a51
    d -= a02 * a14 * a25 * a31 * a40 * a53
    d += a02 * a14 * a25 * a31 * a43 * a50
    d += a02 * a14 * a25 * a33 * a40 * a51
    d -= a02 * a14 * a25 * a33 * a41 * a50
    d += a02 * a15 * a20 * a31 * a43 * a54
    d -= a02 * a15 * a20 * a31 * a44 * a53
    d -= a02 * a15 * a20 * a33 * a41 * a54
    d += a02 * a15 * a20 * a33 * a44 * a51
    d += a02 * a15 * a20 * a34 * a41 * a53
    d -= a02 * a15 * a20 * a34 * a43 * a51
    d -= a02 * a15 * a21 * a30 * a43 * a54
    d += a02 * a15 * a21 * a30 * a44 * a53
    d += a02 * a15 * a21 * a33 * a40 * a54
    d -= a02 * a15 * a21 * a33 * a44 * a50
    d -= a02 * a15 * a21 * a34 * a40 * a53
    d += a02 * a15 * a21 * a34 * a43 * a50
    d += a02 * a15 * a23 * a30 * a41 * a54
    d -= a02 * a15 * a23 * a30 * a44 * a51
    d -= a02 * a15 * a23 * a31 * a40 * a54
    d += a02 * a15 * a23 * a31 * a44 * a50
    d += a02 * a15 * a23 * a34 * a40 * a51
    d -= a02 * a15 * a23 * a34 * a41 * a50
    d -= a02 * a15 * a24 * a30 * a41 * a53
    d += a02 * a15 * a24 * a30 * a43 * a51
    d += a02 * a15 * a24 * a31 * a40 * a53
    d -= a02 * a15 * a24 * a31 * a43 * a50
    d -= a02 * a15 * a24 * a33 * a40 * a51
    d += a02 * a15 * a24 * a33 * a41 * a50
    d -= a03 * a10 * a21 * a32 * a44 * a55
    d += a03 * a10 * a21 * a32 * a45 * a54
    d += a03 * a10 * a21 * a34 * a42 * a55
    d -= a03 * a10 * a21 * a34 * a45 * a52
    d -= a03 * a10 * a21 * a35 * a42 * a54
    d += a03 * a10 * a21 * a35 * a44 * a52
    d += a03 * a10 * a22 * a31 * a44 * a55
    d -= a03 * a10 * a22 * a31 * a45 * a54
    d -= a03 * a10 * a22 * a34 * a41 * a55
    d += a03 * a10 * a22 * a34 * a45 * a51
    d += a03 * a10 * a22 * a35 * a41 * a54
    d -= a03 * a10 * a22 * a35 * a44 * a51
    d -= a03 * a10 * a24 * a31 * a42 * a55
    d += a03 * a10 * a24 * a31 * a45 * a52
    d += a03 * a10 * a24 * a32 * a41 * a55
    d -= a03 * a10 * a24 * a32 * a45 * a51
    d -= a03 * a10 * a24 * a35 * a41 * a52
    d += a03 * a10 * a24 * a35 * a42 * a51
    d += a03 * a10 * a25 * a31 * a42 * a54
    d -= a03 * a10 * a25 * a31 * a44 * a52
    d -= a03 * a10 * a25 * a32 * a41 * a54
    d += a03 * a10 * a25 * a32 * a44 * a51
    d += a03 * a10 * a25 * a34 * a41 * a52
    d -= a03 * a10 * a25 * a34 * a42 * a51
    d += a03 * a11 * a20 * a32 * a44 * a55
    d -= a03 * a11 * a20 * a32 * a45 * a54
    d -= a03 * a11 * a20 * a34 * a42 * a55
    d += a03 * a11 * a20 * a34 * a45 * a52
    d += a03 * a11 * a20 * a35 * a42 * a54
    d -= a03 * a11 * a20 * a35 * a44 * a52
    d -= a03 * a11 * a22 * a30 * a44 * a55
    d += a03 * a11 * a22 * a30 * a45 * a54
    d += a03 * a11 * a22 * a34 * a40 * a55
    d -= a03 * a11 * a22 * a34 * a45 * a50
    d -= a03 * a11 * a22 * a35 * a40 * a54
    d += a03 * a11 * a22 * a35 * a44 * a50
    d += a03 * a11 * a24 * a30 * a42 * a55
    d -= a03 * a11 * a24 * a30 * a45 * a52
    d -= a03 * a11 * a24 * a32 * a40 * a55
    d += a03 * a11 * a24 * a32 * a45 * a50
    d += a03 * a11 * a24 * a35 * a40 * a52
    d -= a03 * a11 * a24 * a35 * a42 * a50
    d -= a03 * a11 * a25 * a30 * a42 * a54
    d += a03 * a11 * a25 * a30 * a44 * a52
    d += a03 * a11 * a25 * a32 * a40 * a54
    d -= a03 * a11 * a25 * a32 * a44 * a50
    d -= a03 * a11 * a25 * a34 * a40 * a52
    d += a03 * a11 * a25 * a34 * a42 * a50
    d -= a03 * a12 * a20 * a31 * a44 * a55
    d += a03 * a12 * a20 * a31 * a45 * a54
    d += a03 * a12 * a20 * a34 * a41 * a55
    d -= a03 * a12 * a20 * a34 * a45 * a51
    d -= a03 * a12 * a20 * a35 * a41 * a54
    d += a03 * a12 * a20 * a35 * a44 * a51
    d += a03 * a12 * a21 * a30 * a44 * a55
    d -= a03 * a12 * a21 * a30 * a45 * a54
    d -= a03 * a12 * a21 * a34 * a40 * a55
    d += a03 * a12 * a21 * a34 * a45 * a50
    d += a03 * a12 * a21 * a35 * a40 * a54
    d -= a03 * a12 * a21 * a35 * a44 * a50
    d -= a03 * a12 * a24 * a30 * a41 * a55
    d += a03 * a12 * a24 * a30 * a45 * a51
    d += a03 * a12 * a24 * a31 * a40 * a55
    d -= a03 * a12 * a24 * a31 * a45 * a50
    d -= a03 * a12 * a24 * a35 * a40 * a51
    d += a03 * a12 * a24 * a35 * a41 * a50
    d += a03 * a12 * a25 * a30 * a41 * a54
    d -= a03 * a12 * a25 * a30 * a44 * a51
    d -= a03 * a12 * a25 * a31 * a40 * a54
    d += a03 * a12 * a25 * a31 * a44 * a50
    d += a03 * a12 * a25 * a34 * a40 * a51
    d -= a03 * a12 * a25 * a34 * a41 * a50
    d += a03 * a14 * a20 * a31 * a42 * a55
    d -= a03 * a14 * a20 * a31 * a45 * a52
    d -= a03 * a14 * a20 * a32 * a41 * a55
    d += a03 * a14 * a20 * a32 * a45 * a51
    d += a03 * a14 * a20 * a35 * a41 * a52
    d -= a03 * a14 * a20 * a35 * a42 * a51
    d -= a03 * a14 * a21 * a30 * a42 * a55
    d += a03 * a14 * a21 * a30 * a45 * a52
    d += a03 * a14 * a21 * a32 * a40 * a55
    d -= a03 * a14 * a21 * a32 * a45 * a50
    d -= a03 * a14 * a21 * a35 * a40 * a52
    d += a03 * a14 * a21 * a35 * a42 * a50
    d += a03 * a14 * a22 * a30 * a41 * a55
    d -= a03 * a14 * a22 * a30 * a45 * a51
    d -= a03 * a14 * a22 * a31 * a40 * a55
    d += a03 * a14 * a22 * a31 * a45 * a50
    d += a03 * a14 * a22 * a35 * a40 * a51
    d -= a03 * a14 * a22 * a35 * a41 * a50
    d -= a03 * a14 * a25 * a30 * a41 * a52
    d += a03 * a14 * a25 * a30 * a42 * a51
    d += a03 * a14 * a25 * a31 * a40 * a52
    d -= a03 * a14 * a25 * a31 * a42 * a50
    d -= a03 * a14 * a25 * a32 * a40 * a51
    d += a03 * a14 * a25 * a32 * a41 * a50
    d -= a03 * a15 * a20 * a31 * a42 * a54
    d += a03 * a15 * a20 * a31 * a44 * a52
    d += a03 * a15 * a20 * a32 * a41 * a54
    d -= a03 * a15 * a20 * a32 * a44 * a51
    d -= a03 * a15 * a20 * a34 * a41 * a52
    d += a03 * a15 * a20 * a34 * a42 * a51
    d += a03 * a15 * a21 * a30 * a42 * a54
    d -= a03 * a15 * a21 * a30 * a44 * a52
    d -= a03 * a15 * a21 * a32 * a40 * a54
    d += a03 * a15 * a21 * a32 * a44 * a50
    d += a03 * a15 * a21 * a34 * a40 * a52
    d -= a03 * a15 * a21 * a34 * a42 * a50
    d -= a03 * a15 * a22 * a30 * a41 * a54
    d += a03 * a15 * a22 * a30 * a44 * a51
    d += a03 * a15 * a22 * a31 * a40 * a54
    d -= a03 * a15 * a22 * a31 * a44 * a50
    d -= a03 * a15 * a22 * a34 * a40 * a51
    d += a03 * a15 * a22 * a34 * a41 * a50
    d += a03 * a15 * a24 * a30 * a41 * a52
    d -= a03 * a15 * a24 * a30 * a42 * a51
    d -= a03 * a15 * a24 * a31 * a40 * a52
    d += a03 * a15 * a24 * a31 * a42 * a50
    d += a03 * a15 * a24 * a32 * a40 * a51
    d -= a03 * a15 * a24 * a32 * a41 * a50
    d += a04 * a10 * a21 * a32 * a43 * a55
    d -= a04 * a10 * a21 * a32 * a45 * a53
    d -= a04 * a10 * a21 * a33 * a42 * a55
    d += a04 * a10 * a21 * a33 * a45 * a52
    d += a04 * a10 * a21 * a35 * a42 * a53
    d -= a04 * a10 * a21 * a35 * a43 * a52
    d -= a04 * a10 * a22 * a31 * a43 * a55
    d += a04 * a10 * a22 * a31 * a45 * a53
    d += a04 * a10 * a22 * a33 * a41 * a55
    d -= a04 * a10 * a22 * a33 * a45 * a51
    d -= a04 * a10 * a22 * a35 * a41 * a53
    d += a04 * a10 * a22 * a35 * a43 * a51
    d += a04 * a10 * a23 * a31 * a42 * a55
    d -= a04 * a10 * a23 * a31 * a45 * a52
    d -= a04 * a10 * a23 * a32 * a41 * a55
    d += a04 * a10 * a23 * a32 * a45 * a51
    d += a04 * a10 * a23 * a35 * a41 * a52
    d -= a04 * a10 * a23 * a35 * a42 * a51
    d -= a04 * a10 * a25 * a31 * a42 * a53
    d += a04 * a10 * a25 * a31 * a43 * a52
    d += a04 * a10 * a25 * a32 * a41 * a53
    d -= a04 * a10 * a25 * a32 * a43 * a51
    d -= a04 * a10 * a25 * a33 * a41 * a52
    d += a04 * a10 * a25 * a33 * a42 * a51
    d -= a04 * a11 * a20 * a32 * a43 * a55
    d += a04 * a11 * a20 * a32 * a45 * a53
    d += a04 * a11 * a20 * a33 * a42 * a55
    d -= a04 * a11 * a20 * a33 * a45 * a52
    d -= a04 * a11 * a20 * a35 * a42 * a53
    d += a04 * a11 * a20 * a35 * a43 * a52
    d += a04 * a11 * a22 * a30 * a43 * a55
    d -= a04 * a11 * a22 * a30 * a45 * a53
    d -= a04 * a11 * a22 * a33 * a40 * a55
    d += a04 * a11 * a22 * a33 * a45 * a50
    d += a04 * a11 * a22 * a35 * a40 * a53
    d -= a04 * a11 * a22 * a35 * a43 * a50
    d -= a04 * a11 * a23 * a30 * a42 * a55
    d += a04 * a11 * a23 * a30 * a45 * a52
    d += a04 * a11 * a23 * a32 * a40 * a55
    d -= a04 * a11 * a23 * a32 * a45 * a50
    d -= a04 * a11 * a23 * a35 * a40 * a52
    d += a04 * a11 * a23 * a35 * a42 * a50
    d += a04 * a11 * a25 * a30 * a42 * a53
    d -= a04 * a11 * a25 * a30 * a43 * a52
    d -= a04 * a11 * a25 * a32 * a40 * a53
    d += a04 * a11 * a25 * a32 * a43 * a50
    d += a04 * a11 * a25 * a33 * a40 * a52
    d -= a04 * a11 * a25 * a33 * a42 * a50
    d += a04 * a12 * a20 * a31 * a43 * a55
    d -= a04 * a12 * a20 * a31 * a45 * a53
    d -= a04 * a12 * a20 * a33 * a41 * a55
    d += a04 * a12 * a20 * a33 * a45 * a51
    d += a04 * a12 * a20 * a35 * a41 * a53
    d -= a04 * a12 * a20 * a35 * a43 * a51
    d -= a04 * a12 * a21 * a30 * a43 * a55
    d += a04 * a12 * a21 * a30 * a45 * a53
    d += a04 * a12 * a21 * a33 * a40 * a55
    d -= a04 * a12 * a21 * a33 * a45 * a50
    d -= a04 * a12 * a21 * a35 * a40 * a53
    d += a04 * a12 * a21 * a35 * a43 * a50
    d += a04 * a12 * a23 * a30 * a41 * a55
    d -= a04 * a12 * a23 * a30 * a45 * a51
    d -= a04 * a12 * a23 * a31 * a40 * a55
    d += a04 * a12 * a23 * a31 * a45 * a50
    d += a04 * a12 * a23 * a35 * a40 * a51
    d -= a04 * a12 * a23 * a35 * a41 * a50
    d -= a04 * a12 * a25 * a30 * a41 * a53
    d += a04 * a12 * a25 * a30 * a43 * a51
    d += a04 * a12 * a25 * a31 * a40 * a53
    d -= a04 * a12 * a25 * a31 * a43 * a50
    d -= a04 * a12 * a25 * a33 * a40 * a51
    d += a04 * a12 * a25 * a33 * a41 * a50
    d -= a04 * a13 * a20 * a31 * a42 * a55
    d += a04 * a13 * a20 * a31 * a45 * a52
    d += a04 * a13 * a20 * a32 * a41 * a55
    d -= a04 * a13 * a20 * a32 * a45 * a51
    d -= a04 * a13 * a20 * a35 * a41 * a52
    d += a04 * a13 * a20 * a35 * a42 * a51
    d += a04 * a13 * a21 * a30 * a42 * a55
    d -= a04 * a13 * a21 * a30 * a45 * a52
    d -= a04 * a13 * a21 * a32 * a40 * a55
    d += a04 * a13 * a21 * a32 * a45 * a50
    d += a04 * a13 * a21 * a35 * a40 * a52
    d -= a04 * a13 * a21 * a35 * a42 * a50
    d -= a04 * a13 * a22 * a30 * a41 * a55
    d += a04 * a13 * a22 * a30 * a45 * a51
    d += a04 * a13 * a22 * a31 * a40 * a55
    d -= a04 * a13 * a22 * a31 * a45 * a50
    d -= a04 * a13 * a22 * a35 * a40 * a51
    d += a04 * a13 * a22 * a35 * a41 * a50
    d += a04 * a13 * a25 * a30 * a41 * a52
    d -= a04 * a13 * a25 * a30 * a42 * a51
    d -= a04 * a13 * a25 * a31 * a40 * a52
    d += a04 * a13 * a25 * a31 * a42 * a50
    d += a04 * a13 * a25 * a32 * a40 * a51
    d -= a04 * a13 * a25 * a32 * a41 * a50
    d += a04 * a15 * a20 * a31 * a42 * a53
    d -= a04 * a15 * a20 * a31 * a43 * a52
    d -= a04 * a15 * a20 * a32 * a41 * a53
    d += a04 * a15 * a20 * a32 * a43 * a51
    d += a04 * a15 * a20 * a33 * a41 * a52
    d -= a04 * a15 * a20 * a33 * a42 * a51
    d -= a04 * a15 * a21 * a30 * a42 * a53
    d += a04 * a15 * a21 * a30 * a43 * a52
    d += a04 * a15 * a21 * a32 * a40 * a53
    d -= a04 * a15 * a21 * a32 * a43 * a50
    d -= a04 * a15 * a21 * a33 * a40 * a52
    d += a04 * a15 * a21 * a33 * a42 * a50
    d += a04 * a15 * a22 * a30 * a41 * a53
    d -= a04 * a15 * a22 * a30 * a43 * a51
    d -= a04 * a15 * a22 * a31 * a40 * a53
    d += a04 * a15 * a22 * a31 * a43 * a50
    d += a04 * a15 * a22 * a33 * a40 * a51
    d -= a04 * a15 * a22 * a33 * a41 * a50
    d -= a04 * a15 * a23 * a30 * a41 * a52
    d += a04 * a15 * a23 * a30 * a42 * a51
    d += a04 * a15 * a23 * a31 * a40 * a52
    d -= a04 * a15 * a23 * a31 * a42 * a50
    d -= a04 * a15 * a23 * a32 * a40 * a51
    d += a04 * a15 * a23 * a32 * a41 * a50
    d -= a05 * a10 * a21 * a32 * a43 * a54
    d += a05 * a10 * a21 * a32 * a44 * a53
    d += a05 * a10 * a21 * a33 * a42 * a54
    d -= a05 * a10 * a21 * a33 * a44 * a52
    d -= a05 * a10 * a21 * a34 * a42 * a53
    d += a05 * a10 * a21 * a34 * a43 * a52
    d += a05 * a10 * a22 * a31 * a43 * a54
    d -= a05 * a10 * a22 * a31 * a44 * a53
    d -= a05 * a10 * a22 * a33 * a41 * a54
    d += a05 * a10 * a22 * a33 * a44 * a51
    d += a05 * a10 * a22 * a34 * a41 * a53
    d -= a05 * a10 * a22 * a34 * a43 * a51
    d -= a05 * a10 * a23 * a31 * a42 * a54
    d += a05 * a10 * a23 * a31 * a44 * a52
    d += a05 * a10 * a23 * a32 * a41 * a54
    d -= a05 * a10 * a23 * a32 * a44 * a51
    d -= a05 * a10 * a23 * a34 * a41 * a52
    d += a05 * a10 * a23 * a34 * a42 * a51
    d += a05 * a10 * a24 * a31 * a42 * a53
    d -= a05 * a10 * a24 * a31 * a43 * a52
    d -= a05 * a10 * a24 * a32 * a41 * a53
    d += a05 * a10 * a24 * a32 * a43 * a51
    d += a05 * a10 * a24 * a33 * a41 * a52
    d -= a05 * a10 * a24 * a33 * a42 * a51
    d += a05 * a11 * a20 * a32 * a43 * a54
    d -= a05 * a11 * a20 * a32 * a44 * a53
    d -= a05 * a11 * a20 * a33 * a42 * a54
    d += a05 * a11 * a20 * a33 * a44 * a52
    d += a05 * a11 * a20 * a34 * a42 * a53
    d -= a05 * a11 * a20 * a34 * a43 * a52
    d -= a05 * a11 * a22 * a30 * a43 * a54
    d += a05 * a11 * a22 * a30 * a44 * a53
    d += a05 * a11 * a22 * a33 * a40 * a54
    d -= a05 * a11 * a22 * a33 * a44 * a50
    d -= a05 * a11 * a22 * a34 * a40 * a53
    d += a05 * a11 * a22 * a34 * a43 * a50
    d += a05 * a11 * a23 * a30 * a42 * a54
    d -= a05 * a11 * a23 * a30 * a44 * a52
    d -= a05 * a11 * a23 * a32 * a40 * a54
    d += a05 * a11 * a23 * a32 * a44 * a50
    d += a05 * a11 * a23 * a34 * a40 * a52
    d -= a05 * a11 * a23 * a34 * a42 * a50
    d -= a05 * a11 * a24 * a30 * a42 * a53
    d += a05 * a11 * a24 * a30 * a43 * a52
    d += a05 * a11 * a24 * a32 * a40 * a53
    d -= a05 * a11 * a24 * a32 * a43 * a50
    d -= a05 * a11 * a24 * a33 * a40 * a52
    d += a05 * a11 * a24 * a33 * a42 * a50
    d -= a05 * a12 * a20 * a31 * a43 * a54
    d += a05 * a12 * a20 * a31 * a44 * a53
    d += a05 * a12 * a20 * a33 * a41 * a54
    d -= a05 * a12 * a20 * a33 * a44 * a51
    d -= a05 * a12 * a20 * a34 * a41 * a53
    d += a05 * a12 * a20 * a34 * a43 * a51
    d += a05 * a12 * a21 * a30 * a43 * a54
    d -= a05 * a12 * a21 * a30 * a44 * a53
    d -= a05 * a12 * a21 * a33 * a40 * a54
    d += a05 * a12 * a21 * a33 * a44 * a50
    d += a05 * a12 * a21 * a34 * a40 * a53
    d -= a05 * a12 * a21 * a34 * a43 * a50
    d -= a05 * a12 * a23 * a30 * a41 * a54
    d += a05 * a12 * a23 * a30 * a44 * a51
    d += a05 * a12 * a23 * a31 * a40 * a54
    d -= a05 * a12 * a23 * a31 * a44 * a50
    d -= a05 * a12 * a23 * a34 * a40 * a51
    d += a05 * a12 * a23 * a34 * a41 * a50
    d += a05 * a12 * a24 * a30 * a41 * a53
    d -= a05 * a12 * a24 * a30 * a43 * a51
    d -= a05 * a12 * a24 * a31 * a40 * a53
    d += a05 * a12 * a24 * a31 * a43 * a50
    d += a05 * a12 * a24 * a33 * a40 * a51
    d -= a05 * a12 * a24 * a33 * a41 * a50
    d += a05 * a13 * a20 * a31 * a42 * a54
    d -= a05 * a13 * a20 * a31 * a44 * a52
    d -= a05 * a13 * a20 * a32 * a41 * a54
    d += a05 * a13 * a20 * a32 * a44 * a51
    d += a05 * a13 * a20 * a34 * a41 * a52
    d -= a05 * a13 * a20 * a34 * a42 * a51
    d -= a05 * a13 * a21 * a30 * a42 * a54
    d += a05 * a13 * a21 * a30 * a44 * a52
    d += a05 * a13 * a21 * a32 * a40 * a54
    d -= a05 * a13 * a21 * a32 * a44 * a50
    d -= a05 * a13 * a21 * a34 * a40 * a52
    d += a05 * a13 * a21 * a34 * a42 * a50
    d += a05 * a13 * a22 * a30 * a41 * a54
    d -= a05 * a13 * a22 * a30 * a44 * a51
    d -= a05 * a13 * a22 * a31 * a40 * a54
    d += a05 * a13 * a22 * a31 * a44 * a50
    d += a05 * a13 * a22 * a34 * a40 * a51
    d -= a05 * a13 * a22 * a34 * a41 * a50
    d -= a05 * a13 * a24 * a30 * a41 * a52
    d += a05 * a13 * a24 * a30 * a42 * a51
    d += a05 * a13 * a24 * a31 * a40 * a52
    d -= a05 * a13 * a24 * a31 * a42 * a50
    d -= a05 * a13 * a24 * a32 * a40 * a51
    d += a05 * a13 * a24 * a32 * a41 * a50
    d -= a05 * a14 * a20 * a31 * a42 * a53
    d += a05 * a14 * a20 * a31 * a43 * a52
    d += a05 * a14 * a20 * a32 * a41 * a53
    d -= a05 * a14 * a20 * a32 * a43 * a51
    d -= a05 * a14 * a20 * a33 * a41 * a52
    d += a05 * a14 * a20 * a33 * a42 * a51
    d += a05 * a14 * a21 * a30 * a42 * a53
    d -= a05 * a14 * a21 * a30 * a43 * a52
    d -= a05 * a14 * a21 * a32 * a40 * a53
    d += a05 * a14 * a21 * a32 * a43 * a50
    d += a05 * a14 * a21 * a33 * a40 * a52
    d -= a05 * a14 * a21 * a33 * a42 * a50
    d -= a05 * a14 * a22 * a30 * a41 * a53
    d += a05 * a14 * a22 * a30 * a43 * a51
    d += a05 * a14 * a22 * a31 * a40 * a53
    d -= a05 * a14 * a22 * a31 * a43 * a50
    d -= a05 * a14 * a22 * a33 * a40 * a51
    d += a05 * a14 * a22 * a33 * a41 * a50
    d += a05 * a14 * a23 * a30 * a41 * a52
    d -= a05 * a14 * a23 * a30 * a42 * a51
    d -= a05 * a14 * a23 * a31 * a40 * a52
    d += a05 * a14 * a23 * a31 * a42 * a50
    d += a05 * a14 * a23 * a32 * a40 * a51
    d -= a05 * a14 * a23 * a32 * a41 * a50
    tl.store(out_ptr + i, d, mask=m)


@triton.jit
def minors_kernel(a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    a00 = tl.load(a_ptr + 0 * n + i, mask=m, other=0.0).to(tl.float32)
    a01 = tl.load(a_ptr + 1 * n + i, mask=m, other=0.0).to(tl.float32)
    a02 = tl.load(a_ptr + 2 * n + i, mask=m, other=0.0).to(tl.float32)
    a03 = tl.load(a_ptr + 3 * n + i, mask=m, other=0.0).to(tl.float32)
    a04 = tl.load(a_ptr + 4 * n + i, mask=m, other=0.0).to(tl.float32)
    a05 = tl.load(a_ptr + 5 * n + i, mask=m, other=0.0).to(tl.float32)
    a10 = tl.load(a_ptr + 6 * n + i, mask=m, other=0.0).to(tl.float32)
    a11 = tl.load(a_ptr + 7 * n + i, mask=m, other=0.0).to(tl.float32)
    a12 = tl.load(a_ptr + 8 * n + i, mask=m, other=0.0).to(tl.float32)
    a13 = tl.load(a_ptr + 9 * n + i, mask=m, other=0.0).to(tl.float32)
    a14 = tl.load(a_ptr + 10 * n + i, mask=m, other=0.0).to(tl.float32)
    a15 = tl.load(a_ptr + 11 * n + i, mask=m, other=0.0).to(tl.float32)
    a20 = tl.load(a_ptr + 12 * n + i, mask=m, other=0.0).to(tl.float32)
    a21 = tl.load(a_ptr + 13 * n + i, mask=m, other=0.0).to(tl.float32)
    a22 = tl.load(a_ptr + 14 * n + i, mask=m, other=0.0).to(tl.float32)
    a23 = tl.load(a_ptr + 15 * n + i, mask=m, other=0.0).to(tl.float32)
    a24 = tl.load(a_ptr + 16 * n + i, mask=m, other=0.0).to(tl.float32)
    a25 = tl.load(a_ptr + 17 * n + i, mask=m, other=0.0).to(tl.float32)
    a30 = tl.load(a_ptr + 18 * n + i, mask=m, other=0.0).to(tl.float32)
    a31 = tl.load(a_ptr + 19 * n + i, mask=m, other=0.0).to(tl.float32)
    a32 = tl.load(a_ptr + 20 * n + i, mask=m, other=0.0).to(tl.float32)
    a33 = tl.load(a_ptr + 21 * n + i, mask=m, other=0.0).to(tl.float32)
    a34 = tl.load(a_ptr + 22 * n + i, mask=m, other=0.0).to(tl.float32)
    a35 = tl.load(a_ptr + 23 * n + i, mask=m, other=0.0).to(tl.float32)
    a40 = tl.load(a_ptr + 24 * n + i, mask=m, other=0.0).to(tl.float32)
    a41 = tl.load(a_ptr + 25 * n + i, mask=m, other=0.0).to(tl.float32)
    a42 = tl.load(a_ptr + 26 * n + i, mask=m, other=0.0).to(tl.float32)
    a43 = tl.load(a_ptr + 27 * n + i, mask=m, other=0.0).to(tl.float32)
    a44 = tl.load(a_ptr + 28 * n + i, mask=m, other=0.0).to(tl.float32)
    a45 = tl.load(a_ptr + 29 * n + i, mask=m, other=0.0).to(tl.float32)
    a50 = tl.load(a_ptr + 30 * n + i, mask=m, other=0.0).to(tl.float32)
    a51 = tl.load(a_ptr + 31 * n + i, mask=m, other=0.0).to(tl.float32)
    a52 = tl.load(a_ptr + 32 * n + i, mask=m, other=0.0).to(tl.float32)
    a53 = tl.load(a_ptr + 33 * n + i, mask=m, other=0.0).to(tl.float32)
    a54 = tl.load(a_ptr + 34 * n + i, mask=m, other=0.0).to(tl.float32)
    a55 = tl.load(a_ptr + 35 * n + i, mask=m, other=0.0).to(tl.float32)
    m01 = a00 * a11 - a01 * a10
    m02 = a00 * a12 - a02 * a10
    m03 = a00 * a13 - a03 * a10
    m04 = a00 * a14 - a04 * a10
    m05 = a00 * a15 - a05 * a10
    m12 = a01 * a12 - a02 * a11
    m13 = a01 * a13 - a03 * a11
    m14 = a01 * a14 - a04 * a11
    m15 = a01 * a15 - a05 * a11
    m23 = a02 * a13 - a03 * a12
    m24 = a02 * a14 - a04 * a12
    m25 = a02 * a15 - a05 * a12
    m34 = a03 * a14 - a04 * a13
    m35 = a03 * a15 - a05 * a13
    m45 = a04 * a15 - a05 * a14
    m012 = a20 * m12 - a21 * m02 + a22 * m01
    m013 = a20 * m13 - a21 * m03 + a23 * m01
    m014 = a20 * m14 - a21 * m04 + a24 * m01
    m015 = a20 * m15 - a21 * m05 + a25 * m01
    m023 = a20 * m23 - a22 * m03 + a23 * m02
    m024 = a20 * m24 - a22 * m04 + a24 * m02
    m025 = a20 * m25 - a22 * m05 + a25 * m02
    m034 = a20 * m34 - a23 * m04 + a24 * m03
    m035 = a20 * m35 - a23 * m05 + a25 * m03
    m045 = a20 * m45 - a24 * m05 + a25 * m04
    m123 = a21 * m23 - a22 * m13 + a23 * m12
    m124 = a21 * m24 - a22 * m14 + a24 * m12
    m125 = a21 * m25 - a22 * m15 + a25 * m12
    m134 = a21 * m34 - a23 * m14 + a24 * m13
    m135 = a21 * m35 - a23 * m15 + a25 * m13
    m145 = a21 * m45 - a24 * m15 + a25 * m14
    m234 = a22 * m34 - a23 * m24 + a24 * m23
    m235 = a22 * m35 - a23 * m25 + a25 * m23
    m245 = a22 * m45 - a24 * m25 + a25 * m24
    m345 = a23 * m45 - a24 * m35 + a25 * m34
    m0123 = -a30 * m123 + a31 * m023 - a32 * m013 + a33 * m012
    m0124 = -a30 * m124 + a31 * m024 - a32 * m014 + a34 * m012
    m0125 = -a30 * m125 + a31 * m025 - a32 * m015 + a35 * m012
    m0134 = -a30 * m134 + a31 * m034 - a33 * m014 + a34 * m013
    m0135 = -a30 * m135 + a31 * m035 - a33 * m015 + a35 * m013
    m0145 = -a30 * m145 + a31 * m045 - a34 * m015 + a35 * m014
    m0234 = -a30 * m234 + a32 * m034 - a33 * m024 + a34 * m023
    m0235 = -a30 * m235 + a32 * m035 - a33 * m025 + a35 * m023
    m0245 = -a30 * m245 + a32 * m045 - a34 * m025 + a35 * m024
    m0345 = -a30 * m345 + a33 * m045 - a34 * m035 + a35 * m034
    m1234 = -a31 * m234 + a32 * m134 - a33 * m124 + a34 * m123
    m1235 = -a31 * m235 + a32 * m135 - a33 * m125 + a35 * m123
    m1245 = -a31 * m245 + a32 * m145 - a34 * m125 + a35 * m124
    m1345 = -a31 * m345 + a33 * m145 - a34 * m135 + a35 * m134
    m2345 = -a32 * m345 + a33 * m245 - a34 * m235 + a35 * m234
    m01234 = a40 * m1234 - a41 * m0234 + a42 * m0134 - a43 * m0124 + a44 * m0123
    m01235 = a40 * m1235 - a41 * m0235 + a42 * m0135 - a43 * m0125 + a45 * m0123
    m01245 = a40 * m1245 - a41 * m0245 + a42 * m0145 - a44 * m0125 + a45 * m0124
    m01345 = a40 * m1345 - a41 * m0345 + a43 * m0145 - a44 * m0135 + a45 * m0134
    m02345 = a40 * m2345 - a42 * m0345 + a43 * m0245 - a44 * m0235 + a45 * m0234
    m12345 = a41 * m2345 - a42 * m1345 + a43 * m1245 - a44 * m1235 + a45 * m1234
    d = -a50 * m12345 + a51 * m02345 - a52 * m01345 + a53 * m01245 - a54 * m01235 + a55 * m01234
    tl.store(out_ptr + i, d, mask=m)


def _build(kernel, stage):
    def build(inputs, params):
        a, out = inputs["A"], inputs["out"]
        n = params["B"]
        g = triton.cdiv(n, BLOCK)

        def run():
            return kernel[(g,)](a, out, n, BLOCK=BLOCK, num_warps=WARPS)

        tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": [g]}
        return Plan([Stage(stage, run, kernel=kernel, tiling=tiling, grid_blocks=g)], output=lambda: out)

    return build


build_v0 = _build(leibniz_kernel, "det_leibniz")
build_v1 = _build(minors_kernel, "det_minors")
