"""Triton code of calib_hash_probe (imported only by the profiling worker).

One kernel for both versions, one program of 4 warps per BLOCK = 128 queries, each lane walking slots from
its key's home until it finds the key; the versions differ only in the table they are given:

    v0: the table at load factor 0.97 (keys0, vals0, C = N / 0.97);
    v1: the table at load factor 0.5 (keys1, vals1, C = 2N).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import HMUL, capacities

BLOCK, WARPS = 128, 4


@triton.jit
def lookup_kernel(q_ptr, tkeys_ptr, tvals_ptr, out_ptr, Q, C, L, HMUL: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    ok = offs < Q
    q = tl.load(q_ptr + offs, mask=ok, other=0)
    slot = (((q.to(tl.int64) * HMUL) % 2147483648) % C).to(tl.int32)
    val = tl.zeros([BLOCK], dtype=tl.float32)
    active = ok
    while tl.max(active.to(tl.int32), axis=0) > 0:
        k = tl.load(tkeys_ptr + slot, mask=active, other=-1)
        hit = active & (k == q)
        v = tl.load(tvals_ptr + slot, mask=hit, other=0.0)
        val = tl.where(hit, v, val)
        slot = slot + 1
        active = active & (k != q) & (k != -1) & (slot < L)
    tl.store(out_ptr + offs, val, mask=ok)


def _build(inputs, p, which):
    q, out = inputs["queries"], inputs["out"]
    tk, tv = inputs[f"keys{which}"], inputs[f"vals{which}"]
    n = q.shape[0]
    cap = capacities(p)[which]
    grid = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "C": cap, "num_warps": WARPS, "grid": [grid]}

    def run():
        return lookup_kernel[(grid,)](
            q, tk, tv, out, n, cap, tk.shape[0], HMUL=HMUL, BLOCK=BLOCK, num_warps=WARPS
        )

    return Plan(
        [Stage("lookup", run, kernel=lookup_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, 0)


def build_v1(inputs, p):
    return _build(inputs, p, 1)
