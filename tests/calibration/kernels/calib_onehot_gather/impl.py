"""Triton code of calib_onehot_gather (imported only by the profiling worker).

One kernel for both versions, a program of 8 warps per BLOCK_M = 256 codes x BLOCK_D = 128 columns, the
lookup chosen by a constexpr:

    v0: ONE_HOT=True: for each BLOCK_V = 64 codebook rows, acc += tl.dot(one_hot(ids) [M, V], codebook [V, D]);
    v1: ONE_HOT=False: the rows codebook[ids] loaded and stored.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_M = 256
BLOCK_V = 64
WARPS = 8


@triton.jit
def lookup_kernel(
    cb_ptr,
    ids_ptr,
    out_ptr,
    N,
    V,
    D: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_V: tl.constexpr,
    ONE_HOT: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    ok = rows < N
    ids = tl.load(ids_ptr + rows, mask=ok, other=-1)
    if ONE_HOT:
        acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
        vv = tl.arange(0, BLOCK_V)
        for v0 in range(0, V, BLOCK_V):
            v = v0 + vv
            one_hot = (ids[:, None] == v[None, :]).to(cb_ptr.dtype.element_ty)
            cb = tl.load(cb_ptr + v[:, None] * D + cols[None, :], mask=v[:, None] < V, other=0.0)
            acc = tl.dot(one_hot, cb, acc)
        res = acc
    else:
        res = tl.load(cb_ptr + ids[:, None].to(tl.int64) * D + cols[None, :], mask=ok[:, None], other=0.0)
    out = out_ptr + rows[:, None].to(tl.int64) * D + cols[None, :]
    tl.store(out, res.to(out_ptr.dtype.element_ty), mask=ok[:, None])


def _build(inputs, p, one_hot):
    cb, ids, out = inputs["codebook"], inputs["ids"], inputs["out"]
    v, d = cb.shape
    n = ids.numel()
    block_d = min(d, 128)
    grid = (triton.cdiv(n, BLOCK_M), triton.cdiv(d, block_d))
    tiling = {
        "BLOCK_M": BLOCK_M,
        "BLOCK_D": block_d,
        "BLOCK_V": BLOCK_V,
        "ONE_HOT": one_hot,
        "num_warps": WARPS,
        "grid": list(grid),
    }

    def run():
        return lookup_kernel[grid](
            cb,
            ids,
            out,
            n,
            v,
            D=d,
            BLOCK_M=BLOCK_M,
            BLOCK_D=block_d,
            BLOCK_V=BLOCK_V,
            ONE_HOT=one_hot,
            num_warps=WARPS,
        )

    return Plan(
        [Stage("lookup", run, kernel=lookup_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, True)


def build_v1(inputs, p):
    return _build(inputs, p, False)
