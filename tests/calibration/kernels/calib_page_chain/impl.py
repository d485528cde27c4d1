"""Triton code of calib_page_chain (imported only by the profiling worker).

One kernel for both versions, one program of 4 warps per sequence, the page lookup chosen by a constexpr:

    v0: CHAIN=True: p = head[r]; for j < NP: out[r, j] = pool[p]; p = next[p] (one page a step);
    v1: CHAIN=False: for each CHUNK pages: ids = table[r, c:c + CHUNK]; out[r, c:c + CHUNK] = pool[ids].
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import PAGE

CHUNK = 32
WARPS = 4


@triton.jit
def gather_pages_kernel(
    pool_ptr,
    table_ptr,
    head_ptr,
    next_ptr,
    out_ptr,
    NP,
    PAGE: tl.constexpr,
    CHUNK: tl.constexpr,
    CHAIN: tl.constexpr,
):
    r = tl.program_id(0)
    cols = tl.arange(0, PAGE)
    out_row = out_ptr + r.to(tl.int64) * NP * PAGE
    if CHAIN:
        p = tl.load(head_ptr + r)
        for j in range(NP):
            vals = tl.load(pool_ptr + p.to(tl.int64) * PAGE + cols)
            tl.store(out_row + j * PAGE + cols, vals)
            p = tl.load(next_ptr + p, mask=j + 1 < NP, other=0)
    else:
        for c in range(0, NP, CHUNK):
            js = c + tl.arange(0, CHUNK)
            ok = js < NP
            ids = tl.load(table_ptr + r.to(tl.int64) * NP + js, mask=ok, other=0)
            vals = tl.load(pool_ptr + ids.to(tl.int64)[:, None] * PAGE + cols[None, :], mask=ok[:, None])
            tl.store(out_row + js[:, None] * PAGE + cols[None, :], vals, mask=ok[:, None])


def _build(inputs, p, chain):
    pool, table, head, nxt, out = (inputs[k] for k in ("pool", "table", "head", "next", "out"))
    r, n_pages = table.shape
    tiling = {"PAGE": PAGE, "CHUNK": CHUNK, "CHAIN": chain, "num_warps": WARPS, "grid": [r]}

    def run():
        return gather_pages_kernel[(r,)](
            pool, table, head, nxt, out, n_pages, PAGE=PAGE, CHUNK=CHUNK, CHAIN=chain, num_warps=WARPS
        )

    return Plan(
        [Stage("gather_pages", run, kernel=gather_pages_kernel, tiling=tiling, grid_blocks=r)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, True)


def build_v1(inputs, p):
    return _build(inputs, p, False)
