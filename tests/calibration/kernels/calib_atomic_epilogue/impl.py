"""Triton code of calib_atomic_epilogue (imported only by the profiling worker).

One kernel for both versions, a program of 8 warps per BLOCK_M x BLOCK_N tile of C, K in one step, the
epilogue chosen by a constexpr (the split-K kernel's two branches):

    v0: ATOMIC=True: C.zero_(); then tl.atomic_add(C[tile], A[rows] @ B[:, cols]);
    v1: ATOMIC=False: tl.store(C[tile], A[rows] @ B[:, cols]).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_M, BLOCK_N, WARPS = 128, 128, 8


@triton.jit
def lowrank_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ATOMIC: tl.constexpr,
):
    pid = tl.program_id(0)
    nbn = tl.cdiv(N, BLOCK_N)
    rows = (pid // nbn) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % nbn) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, K)
    a = tl.load(a_ptr + rows[:, None].to(tl.int64) * K + ks[None, :], mask=rows[:, None] < M, other=0.0)
    b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
    acc = tl.dot(a, b)
    ok = (rows[:, None] < M) & (cols[None, :] < N)
    ptrs = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]
    if ATOMIC:
        tl.atomic_add(ptrs, acc, mask=ok)
    else:
        tl.store(ptrs, acc, mask=ok)


def _build(inputs, p, atomic):
    a, b, out = inputs["a"], inputs["b"], inputs["out"]
    m, k = a.shape
    n = b.shape[1]
    grid = triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N)
    tiling = {
        "BLOCK_M": BLOCK_M,
        "BLOCK_N": BLOCK_N,
        "K": k,
        "ATOMIC": atomic,
        "num_warps": WARPS,
        "grid": [grid],
    }

    def run():
        if atomic:
            out.zero_()  # the split-K epilogue adds into C: C must start at zero
        return lowrank_kernel[(grid,)](
            a, b, out, m, n, K=k, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, ATOMIC=atomic, num_warps=WARPS
        )

    return Plan(
        [Stage("lowrank", run, kernel=lowrank_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, True)


def build_v1(inputs, p):
    return _build(inputs, p, False)
