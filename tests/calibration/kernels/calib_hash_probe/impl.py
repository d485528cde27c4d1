"""Triton code of calib_hash_probe (imported only by the profiling worker).

One kernel for both versions, one program of 4 warps per BLOCK = 128 queries, each lane walking 8-byte slots
(key, value) from its key's home until it finds the key; the versions differ only in the table they are given:

    v0: the table at load factor 0.97 (table0, C = N / 0.97);
    v1: the table at load factor 0.5 (table1, C = 2N).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import capacities

BLOCK, WARPS = 128, 4


@triton.jit
def lookup_kernel(q_ptr, tkeys_ptr, tvals_ptr, out_ptr, Q, C, L, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    ok = offs < Q
    q = tl.load(q_ptr + offs, mask=ok, other=0)
    h = q.to(tl.int64)
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h = h ^ (h >> 16)
    slot = ((h * C) >> 32).to(tl.int32)
    val = tl.zeros([BLOCK], dtype=tl.float32)
    active = ok
    while tl.max(active.to(tl.int32), axis=0) > 0:
        k = tl.load(tkeys_ptr + 2 * slot, mask=active, other=-1)
        hit = active & (k == q)
        v = tl.load(tvals_ptr + 2 * slot + 1, mask=hit, other=0.0)
        val = tl.where(hit, v, val)
        slot = slot + 1
        active = active & (k != q) & (k != -1) & (slot < L)
    tl.store(out_ptr + offs, val, mask=ok)


def _build(inputs, p, which):
    import torch

    q, out = inputs["queries"], inputs["out"]
    table = inputs[f"table{which}"]  # [L, 2] int32: key, value's bits
    tk, tv = table, table.view(torch.float32)
    n = q.shape[0]
    cap = capacities(p)[which]
    grid = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "C": cap, "num_warps": WARPS, "grid": [grid]}

    def run():
        return lookup_kernel[(grid,)](q, tk, tv, out, n, cap, table.shape[0], BLOCK=BLOCK, num_warps=WARPS)

    return Plan(
        [Stage("lookup", run, kernel=lookup_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, 0)


def build_v1(inputs, p):
    return _build(inputs, p, 1)
