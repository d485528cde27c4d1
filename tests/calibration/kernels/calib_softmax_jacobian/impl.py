"""Triton code of calib_softmax_jacobian (imported only by the profiling worker).

One row a program (N a power of two, a multiple of 128).
jacobian_kernel (v0): for each 128-output tile i and each 128-column chunk j, acc[i, j] -= (s_i * s_j) * g_j
(the outer-product part of the Jacobian, times g), the tile summed over j, then s_i * g_i (the diagonal) added.
vjp_kernel (v1): d = <s, g> over the row, dx = s * (g - d).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BI, BJ, V0_WARPS, V1_WARPS = 128, 128, 8, 4


@triton.jit
def jacobian_kernel(s_ptr, g_ptr, o_ptr, N: tl.constexpr, BI: tl.constexpr, BJ: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * N
    for i0 in range(0, N, BI):
        oi = i0 + tl.arange(0, BI)
        si = tl.load(s_ptr + row + oi)
        acc = tl.zeros([BI, BJ], dtype=tl.float32)
        for j0 in range(0, N, BJ):
            oj = j0 + tl.arange(0, BJ)
            sj = tl.load(s_ptr + row + oj)
            gj = tl.load(g_ptr + row + oj)
            acc -= (si[:, None] * sj[None, :]) * gj[None, :]
        gi = tl.load(g_ptr + row + oi)
        tl.store(o_ptr + row + oi, tl.sum(acc, axis=1) + si * gi)


@triton.jit
def vjp_kernel(s_ptr, g_ptr, o_ptr, N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * N
    offs = tl.arange(0, N)
    s = tl.load(s_ptr + row + offs)
    g = tl.load(g_ptr + row + offs)
    d = tl.sum(s * g, axis=0)
    tl.store(o_ptr + row + offs, s * (g - d))


def build_v0(inputs, params):
    s, g, out = inputs["S"], inputs["G"], inputs["out"]
    m, n = params["M"], params["N"]

    def run():
        return jacobian_kernel[(m,)](s, g, out, N=n, BI=BI, BJ=BJ, num_warps=V0_WARPS)

    st = Stage(
        "softmax_bwd_jacobian",
        run,
        kernel=jacobian_kernel,
        tiling={"BI": BI, "BJ": BJ, "grid": [m]},
        grid_blocks=m,
    )
    return Plan([st], output=lambda: out)


def build_v1(inputs, params):
    s, g, out = inputs["S"], inputs["G"], inputs["out"]
    m, n = params["M"], params["N"]

    def run():
        return vjp_kernel[(m,)](s, g, out, N=n, num_warps=V1_WARPS)

    st = Stage("softmax_bwd_vjp", run, kernel=vjp_kernel, tiling={"N": n, "grid": [m]}, grid_blocks=m)
    return Plan([st], output=lambda: out)
