"""Triton code of calib_tridiag_dense (imported only by the profiling worker).

The systems are stored interleaved, [n, B] (row i of system s at i * B + s), n = 32.
dense_gj_kernel (v0): one program a system; the dense [32, 32] matrix assembled from the three diagonals in
registers, 32 Gauss-Jordan steps (pivot row and column taken by masked sums over the tile, the whole tile and the
right-hand side updated), then x = r / diag.
thomas_kernel (v1): one system a lane, BLOCK systems a program; the forward sweep (c' to the scratch W, d' to X)
and the back substitution over the 32 rows, unrolled.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

NROW = 32
GJ_WARPS = 4
BLOCK, WARPS = 128, 4


@triton.jit
def dense_gj_kernel(a_ptr, d_ptr, c_ptr, r_ptr, x_ptr, B, N: tl.constexpr):
    s = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, N)
    cols = tl.arange(0, N)
    sub = tl.load(a_ptr + rows * B + s)
    dia = tl.load(d_ptr + rows * B + s)
    sup = tl.load(c_ptr + rows * B + s)
    rhs = tl.load(r_ptr + rows * B + s)
    r2 = rows[:, None]
    c2 = cols[None, :]
    # the dense matrix: M[i, i - 1] = A_i, M[i, i] = D_i, M[i, i + 1] = C_i, zeros elsewhere
    m = tl.where(c2 == r2, dia[:, None], 0.0)
    m = tl.where(c2 == r2 - 1, sub[:, None], m)
    m = tl.where(c2 == r2 + 1, sup[:, None], m)
    for k in range(N):
        prow = tl.sum(tl.where(r2 == k, m, 0.0), axis=0)  # row k, [N] over the columns
        pcol = tl.sum(tl.where(c2 == k, m, 0.0), axis=1)  # column k, [N] over the rows
        piv = tl.sum(tl.where(rows == k, pcol, 0.0), axis=0)
        rk = tl.sum(tl.where(rows == k, rhs, 0.0), axis=0)
        f = tl.where(rows == k, 0.0, pcol / piv)  # eliminate column k from every other row
        m = m - f[:, None] * prow[None, :]
        rhs = rhs - f * rk
    dg = tl.sum(tl.where(c2 == r2, m, 0.0), axis=1)
    tl.store(x_ptr + rows * B + s, rhs / dg)


@triton.jit
def thomas_kernel(a_ptr, d_ptr, c_ptr, r_ptr, w_ptr, x_ptr, B, N: tl.constexpr, BLOCK: tl.constexpr):
    s = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = s < B
    dd = tl.load(d_ptr + s, mask=ok, other=1.0)
    cp = tl.load(c_ptr + s, mask=ok, other=0.0) / dd
    dp = tl.load(r_ptr + s, mask=ok, other=0.0) / dd
    tl.store(w_ptr + s, cp, mask=ok)
    tl.store(x_ptr + s, dp, mask=ok)
    for i in tl.static_range(1, N):
        ai = tl.load(a_ptr + i * B + s, mask=ok, other=0.0)
        di = tl.load(d_ptr + i * B + s, mask=ok, other=1.0)
        ci = tl.load(c_ptr + i * B + s, mask=ok, other=0.0)
        ri = tl.load(r_ptr + i * B + s, mask=ok, other=0.0)
        den = di - ai * cp
        cp = ci / den
        dp = (ri - ai * dp) / den
        tl.store(w_ptr + i * B + s, cp, mask=ok)
        tl.store(x_ptr + i * B + s, dp, mask=ok)
    xn = dp  # x_{n-1} = d'_{n-1}, already in X
    for j in tl.static_range(1, N):
        i = N - 1 - j
        cpi = tl.load(w_ptr + i * B + s, mask=ok, other=0.0)
        dpi = tl.load(x_ptr + i * B + s, mask=ok, other=0.0)
        xn = dpi - cpi * xn
        tl.store(x_ptr + i * B + s, xn, mask=ok)


def build_v0(inputs, params):
    a, d, c, r, out = (inputs[k] for k in ("A", "D", "C", "R", "out"))
    b = params["B"]
    grid = (b,)

    def run():
        return dense_gj_kernel[grid](a, d, c, r, out, b, N=NROW, num_warps=GJ_WARPS)

    tiling = {"N": NROW, "num_warps": GJ_WARPS, "grid": list(grid)}
    st = Stage("tridiag_dense_gj", run, kernel=dense_gj_kernel, tiling=tiling, grid_blocks=grid[0])
    return Plan([st], output=lambda: out)


def build_v1(inputs, params):
    a, d, c, r, w, out = (inputs[k] for k in ("A", "D", "C", "R", "W", "out"))
    b = params["B"]
    grid = (triton.cdiv(b, BLOCK),)

    def run():
        return thomas_kernel[grid](a, d, c, r, w, out, b, N=NROW, BLOCK=BLOCK, num_warps=WARPS)

    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": list(grid)}
    st = Stage("tridiag_thomas", run, kernel=thomas_kernel, tiling=tiling, grid_blocks=grid[0])
    return Plan([st], output=lambda: out)
