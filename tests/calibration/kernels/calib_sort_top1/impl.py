"""Triton code of calib_sort_top1 (imported only by the profiling worker).

One kernel for both versions, a program per BLOCK_T tokens holding their E logits, the selection chosen
by a constexpr:

    v0: SORT=True: the int32 keys sorted along the experts, the last column taken;
    v1: SORT=False: the largest key by tl.max.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage


@triton.jit
def router_kernel(x_ptr, gate_ptr, idx_ptr, T, E: tl.constexpr, BLOCK_T: tl.constexpr, SORT: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, E)
    ok = rows < T
    x = tl.load(x_ptr + rows[:, None].to(tl.int64) * E + cols[None, :], mask=ok[:, None], other=0.0)
    # order-preserving integer of the 16-bit float: negative values' magnitude bits flipped
    b = x.to(tl.int16, bitcast=True).to(tl.int32)
    b = b ^ ((b >> 15) & 0x7FFF)
    keys = (b << 16) | (E - 1 - cols[None, :])
    if SORT:
        s = tl.sort(keys, dim=1)
        best = tl.sum(tl.where(cols[None, :] == E - 1, s, 0), axis=1)
    else:
        best = tl.max(keys, axis=1)
    idx = (E - 1) - (best & 0xFFFF)
    xf = x.to(tl.float32)
    m = tl.max(xf, axis=1)
    den = tl.sum(tl.exp(xf - m[:, None]), axis=1)
    tl.store(gate_ptr + rows, 1.0 / den, mask=ok)
    tl.store(idx_ptr + rows, idx, mask=ok)


def _build(inputs, p, sort):
    x, gate, idx = inputs["x"], inputs["gate"], inputs["idx"]
    t, e = x.shape
    block_t = 16
    warps = 4
    grid = triton.cdiv(t, block_t)
    tiling = {"BLOCK_T": block_t, "E": e, "SORT": sort, "num_warps": warps, "grid": [grid]}

    def run():
        return router_kernel[(grid,)](x, gate, idx, t, E=e, BLOCK_T=block_t, SORT=sort, num_warps=warps)

    return Plan(
        [Stage("router", run, kernel=router_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: (gate, idx),
    )


def build_v0(inputs, p):
    return _build(inputs, p, True)


def build_v1(inputs, p):
    return _build(inputs, p, False)
