"""Triton code of calib_sinkhorn_iters (imported only by the profiling worker).

sinkhorn_kernel: grid (B,), 1 warp, one problem a program: C [n, n] loaded (masked to BLOCK = the next
power of two), K = exp(-C/ε) kept in registers; v = 1; Kv = K·v; then each iteration
u = a / Kv, v = b / (Kᵀu), Kv = K·v; P = u ⊙ K ⊙ v stored.
    EARLY=False (v0): ``for it in range(max_iters)``;
    EARLY=True (v1): ``while it < max_iters and err > tol``, err = max_i |u_i Kv_i - 1/n| · n after each
    iteration.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

EPS, TOL, MAX_ITERS, WARPS = 0.5, 1e-5, 100, 1  # the package's EPS, TOL, MAX_ITERS


@triton.jit
def sinkhorn_kernel(
    c_ptr, p_ptr, n, inv_n, inv_eps, tol, max_iters, EARLY: tl.constexpr, BLOCK: tl.constexpr
):
    pb = tl.program_id(0).to(tl.int64)
    r = tl.arange(0, BLOCK)
    rm = r < n
    m2 = rm[:, None] & rm[None, :]
    offs = pb * n * n + r[:, None] * n + r[None, :]
    c = tl.load(c_ptr + offs, mask=m2, other=0.0)
    k = tl.where(m2, tl.exp(-c * inv_eps), 0.0)
    marg = tl.where(rm, inv_n, 0.0)
    v = tl.where(rm, 1.0, 0.0)
    kv = tl.sum(k * v[None, :], axis=1)
    u = tl.zeros([BLOCK], dtype=tl.float32)
    if EARLY:
        err = tol + 1.0
        it = max_iters * 0
        while (it < max_iters) & (err > tol):
            u = tl.where(rm, marg / tl.where(rm, kv, 1.0), 0.0)
            ktu = tl.sum(k * u[:, None], axis=0)
            v = tl.where(rm, marg / tl.where(rm, ktu, 1.0), 0.0)
            kv = tl.sum(k * v[None, :], axis=1)
            err = tl.max(tl.abs(u * kv - marg), axis=0) / inv_n
            it += 1
    else:
        for _it in range(0, max_iters):
            u = tl.where(rm, marg / tl.where(rm, kv, 1.0), 0.0)
            ktu = tl.sum(k * u[:, None], axis=0)
            v = tl.where(rm, marg / tl.where(rm, ktu, 1.0), 0.0)
            kv = tl.sum(k * v[None, :], axis=1)
    plan = u[:, None] * k * v[None, :]
    tl.store(p_ptr + offs, plan, mask=m2)


def _build(inputs, params, early):
    c, out = inputs["c"], inputs["out"]
    b, n = params["B"], params["n"]
    block = triton.next_power_of_2(n)

    def run():
        return sinkhorn_kernel[(b,)](
            c, out, n, 1.0 / n, 1.0 / EPS, TOL, MAX_ITERS, EARLY=early, BLOCK=block, num_warps=WARPS
        )

    tiling = {"BLOCK": block, "num_warps": WARPS, "grid": [b], "EARLY": early, "max_iters": MAX_ITERS}
    return Plan(
        [Stage("sinkhorn", run, kernel=sinkhorn_kernel, tiling=tiling, grid_blocks=b)], output=lambda: out
    )


def build_v0(inputs, params):
    return _build(inputs, params, False)


def build_v1(inputs, params):
    return _build(inputs, params, True)
