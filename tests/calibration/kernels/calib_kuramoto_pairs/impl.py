"""Triton code of calib_kuramoto_pairs (imported only by the profiling worker).

pairwise_kernel (v0): a program a block of BI = 32 oscillators (4 warps); for each block of BJ = 128 phases
theta_j (masked past N: a zero term), a [BI, BJ] accumulator tile += sin(theta_j - theta_i), reduced along j
once after the loop; out = omega + (K / N) acc.
mean_field_kernel (v1): a program a block of BM = 1024 oscillators (4 warps); S and C accumulated as [BM]
vectors over all phases in blocks of BM (sin and cos of each), reduced once, then out = omega + (K / N)
(S cos(theta_i) - C sin(theta_i)).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BI, BJ, BM, WARPS = 32, 128, 1024, 4


@triton.jit
def pairwise_kernel(th_ptr, om_ptr, o_ptr, N, k_n, BI: tl.constexpr, BJ: tl.constexpr):
    oi = tl.program_id(0) * BI + tl.arange(0, BI)
    mi = oi < N
    ti = tl.load(th_ptr + oi, mask=mi, other=0.0)
    acc = tl.zeros([BI, BJ], dtype=tl.float32)
    for j0 in range(0, N, BJ):
        oj = j0 + tl.arange(0, BJ)
        mj = oj < N
        tj = tl.load(th_ptr + oj, mask=mj, other=0.0)
        acc += tl.where(mj[None, :], tl.sin(tj[None, :] - ti[:, None]), 0.0)
    om = tl.load(om_ptr + oi, mask=mi, other=0.0)
    tl.store(o_ptr + oi, om + k_n * tl.sum(acc, axis=1), mask=mi)


@triton.jit
def mean_field_kernel(th_ptr, om_ptr, o_ptr, N, k_n, BM: tl.constexpr):
    sv = tl.zeros([BM], dtype=tl.float32)
    cv = tl.zeros([BM], dtype=tl.float32)
    for j0 in range(0, N, BM):
        oj = j0 + tl.arange(0, BM)
        mj = oj < N
        tj = tl.load(th_ptr + oj, mask=mj, other=0.0)
        sv += tl.where(mj, tl.sin(tj), 0.0)
        cv += tl.where(mj, tl.cos(tj), 0.0)
    s = tl.sum(sv, axis=0)
    c = tl.sum(cv, axis=0)
    oi = tl.program_id(0) * BM + tl.arange(0, BM)
    mi = oi < N
    ti = tl.load(th_ptr + oi, mask=mi, other=0.0)
    om = tl.load(om_ptr + oi, mask=mi, other=0.0)
    tl.store(o_ptr + oi, om + k_n * (s * tl.cos(ti) - c * tl.sin(ti)), mask=mi)


def build_v0(inputs, params):
    from . import K_COUPLE

    th, om, out = inputs["theta"], inputs["omega"], inputs["out"]
    n = params["N"]
    grid = (triton.cdiv(n, BI),)

    def run():
        return pairwise_kernel[grid](th, om, out, n, K_COUPLE / n, BI=BI, BJ=BJ, num_warps=WARPS)

    st = Stage(
        "kuramoto_pairwise",
        run,
        kernel=pairwise_kernel,
        tiling={"BI": BI, "BJ": BJ, "grid": list(grid)},
        grid_blocks=grid[0],
    )
    return Plan([st], output=lambda: out)


def build_v1(inputs, params):
    from . import K_COUPLE

    th, om, out = inputs["theta"], inputs["omega"], inputs["out"]
    n = params["N"]
    grid = (triton.cdiv(n, BM),)

    def run():
        return mean_field_kernel[grid](th, om, out, n, K_COUPLE / n, BM=BM, num_warps=WARPS)

    st = Stage(
        "kuramoto_mean_field",
        run,
        kernel=mean_field_kernel,
        tiling={"BM": BM, "grid": list(grid)},
        grid_blocks=grid[0],
    )
    return Plan([st], output=lambda: out)
