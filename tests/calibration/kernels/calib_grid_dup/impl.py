"""Triton code of calib_grid_dup (imported only by the profiling worker).

matmul_kernel: one program a [BM, BN] tile of C (program_id(0) the tile, grouped by 8 rows of tiles for L2),
a loop over the whole of K in steps of BK (tl.dot, fp32 accumulator), C's tile stored. program_id(1), the
split axis left over from a split-K version, is not used: v0 launches it 4 wide (every tile 4 times), v1 1.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BM, BN, BK, WARPS, STAGES, GROUP = 128, 128, 64, 8, 3, 8


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr
):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GROUP * tiles_n
    first_m = (pid // per_group) * GROUP
    group_m = min(tiles_m - first_m, GROUP)
    pid_m = first_m + (pid % per_group) % group_m
    pid_n = (pid % per_group) // group_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(
            a_ptr + rm[:, None] * K + (k0 + rk)[None, :],
            mask=(rm[:, None] < M) & (k0 + rk < K)[None, :],
            other=0.0,
        )
        b = tl.load(
            b_ptr + (k0 + rk)[:, None] * N + rn[None, :],
            mask=(k0 + rk < K)[:, None] & (rn[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _build(name, split, inputs, params):
    a, b, out = inputs["A"], inputs["B"], inputs["out"]
    m, n, k = params["M"], params["N"], params["K"]
    grid = (triton.cdiv(m, BM) * triton.cdiv(n, BN), split)

    def run():
        return matmul_kernel[grid](
            a, b, out, m, n, k, BM=BM, BN=BN, BK=BK, GROUP=GROUP, num_warps=WARPS, num_stages=STAGES
        )

    tiling = {"BM": BM, "BN": BN, "BK": BK, "num_warps": WARPS, "num_stages": STAGES, "grid": list(grid)}
    stage = Stage(name, run, kernel=matmul_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])
    return Plan([stage], output=lambda: out)


def build_v0(inputs, params):
    return _build("matmul_dup4", 4, inputs, params)


def build_v1(inputs, params):
    return _build("matmul", 1, inputs, params)
