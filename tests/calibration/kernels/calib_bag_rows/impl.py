"""Triton code of calib_bag_rows (imported only by the profiling worker).

One kernel for both versions, a program of 4 warps per bag, the loads chosen by a constexpr:

    v0: GATHER=False: for j in range(L) (L a runtime argument): one index, then one row, added;
    v1: GATHER=True: the L ids as a vector, the [L, D] rows as one load, tl.sum over L.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

WARPS = 4


@triton.jit
def bag_kernel(table_ptr, ids_ptr, out_ptr, L, D: tl.constexpr, BLOCK_L: tl.constexpr, GATHER: tl.constexpr):
    bag = tl.program_id(0).to(tl.int64)
    d = tl.arange(0, D)
    if GATHER:
        jj = tl.arange(0, BLOCK_L)
        idx = tl.load(ids_ptr + bag * L + jj, mask=jj < L, other=0)
        rows = tl.load(
            table_ptr + idx[:, None].to(tl.int64) * D + d[None, :], mask=(jj < L)[:, None], other=0.0
        )
        acc = tl.sum(rows.to(tl.float32), axis=0)
    else:
        acc = tl.zeros((D,), dtype=tl.float32)
        for j in range(L):
            idx = tl.load(ids_ptr + bag * L + j)
            acc += tl.load(table_ptr + idx.to(tl.int64) * D + d).to(tl.float32)
    tl.store(out_ptr + bag * D + d, acc)


def _build(inputs, p, gather):
    table, ids, out = inputs["table"], inputs["ids"], inputs["out"]
    b, ell = ids.shape
    d = table.shape[1]
    block_l = triton.next_power_of_2(ell)
    tiling = {"D": d, "BLOCK_L": block_l, "GATHER": gather, "num_warps": WARPS, "grid": [b]}

    def run():
        return bag_kernel[(b,)](table, ids, out, ell, D=d, BLOCK_L=block_l, GATHER=gather, num_warps=WARPS)

    return Plan(
        [Stage("embedding_bag", run, kernel=bag_kernel, tiling=tiling, grid_blocks=b)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
