"""Triton code of calib_popcount (imported only by the profiling worker).

One kernel for both versions, a program per BLOCK_N = 128 database codes (8 words per thread), a runtime
loop over the queries (the unrolled bit loop stays ~1k instructions), the popcount chosen by a constexpr:

    v0: HW_POPC=False: c += (v >> b) & 1 for the 32 bits of each word;
    v1: HW_POPC=True: libdevice.popc(v).

The Triton interpreter cannot call libdevice: on the CPU (TRITON_INTERPRET=1) v1's popcount is the SWAR
bit trick in numpy (the same counts), so the CPU tests check the kernel's structure and v0's bit loop, and
the GPU's correctness run checks popc.
"""

import os

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

if os.environ.get("TRITON_INTERPRET") == "1":

    @triton.jit
    def _hw_popc(v):
        v = v - ((v >> 1) & 0x55555555)
        v = (v & 0x33333333) + ((v >> 2) & 0x33333333)
        v = (v + (v >> 4)) & 0x0F0F0F0F
        v = v + (v >> 8)
        v = v + (v >> 16)
        return v & 0x3F

else:
    from triton.language.extra.cuda import libdevice

    @triton.jit
    def _hw_popc(v):
        return libdevice.popc(v)


@triton.jit
def _popcount(v, HW_POPC: tl.constexpr):
    if HW_POPC:
        c = _hw_popc(v)
    else:
        c = tl.zeros(v.shape, dtype=tl.int32)
        for b in tl.static_range(32):
            c += (v >> b) & 1
    return c


@triton.jit
def hamming_kernel(
    db_ptr, q_ptr, dist_ptr, N, Q: tl.constexpr, W: tl.constexpr, BLOCK_N: tl.constexpr, HW_POPC: tl.constexpr
):
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    words = tl.arange(0, W)
    ok = rows < N
    codes = tl.load(db_ptr + rows[:, None].to(tl.int64) * W + words[None, :], mask=ok[:, None], other=0)
    for q in range(Q):
        query = tl.load(q_ptr + q * W + words)
        c = _popcount(codes ^ query[None, :], HW_POPC)
        tl.store(dist_ptr + q * N + rows, tl.sum(c, axis=1), mask=ok)


def _build(inputs, p, hw_popc):
    db, query, dist = inputs["db"], inputs["query"], inputs["dist"]
    n, w = db.shape
    q = query.shape[0]
    block_n = 128
    warps = 4
    grid = triton.cdiv(n, block_n)
    tiling = {"BLOCK_N": block_n, "Q": q, "W": w, "HW_POPC": hw_popc, "num_warps": warps, "grid": [grid]}

    def run():
        return hamming_kernel[(grid,)](
            db, query, dist, n, Q=q, W=w, BLOCK_N=block_n, HW_POPC=hw_popc, num_warps=warps
        )

    return Plan(
        [Stage("hamming", run, kernel=hamming_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: dist,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
