"""Triton code of calib_linattn_chunks (imported only by the profiling worker).

quadratic_kernel (v0): a program a [BM, D] block of queries of one head; for every key block at or before the
diagonal (the blocks after it are skipped: no MMA by a zero tile), s = q k^T [BM, BN] (tl.dot), the causal mask
applied (j <= i), o += s v (tl.dot): the parallel ("attention") form, O(L^2 D) a head.
chunk_kernel (v1): a program a head and a BDV-wide slice of the value dimension walks the sequence in chunks of
C = 64 rows, carrying the state S = sum over past rows of k_j v_j^T [D, BDV] (fp32): o = mask(q k^T) v + q S
(the chunk's own rows by the parallel form, the past by the state), then S += k^T v: O(L D^2) a head.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BM, BN, QWARPS, QSTAGES = 128, 64, 8, 2
CH, BDV, CWARPS = 64, 16, 4


@triton.jit
def quadratic_kernel(q_ptr, k_ptr, v_ptr, o_ptr, L, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * L * D
    rows = pid_m * BM + tl.arange(0, BM)
    dcol = tl.arange(0, D)
    q = tl.load(q_ptr + base + rows[:, None] * D + dcol[None, :], mask=(rows < L)[:, None], other=0.0)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    hi = tl.minimum((pid_m + 1) * BM, L)
    for start in range(0, hi, BN):
        cols = start + tl.arange(0, BN)
        kv_ok = (cols < L)[:, None]
        k = tl.load(k_ptr + base + cols[:, None] * D + dcol[None, :], mask=kv_ok, other=0.0)
        v = tl.load(v_ptr + base + cols[:, None] * D + dcol[None, :], mask=kv_ok, other=0.0)
        s = tl.dot(q, tl.trans(k))
        s = tl.where(cols[None, :] <= rows[:, None], s, 0.0)
        acc = tl.dot(s.to(tl.float16), v, acc)
    tl.store(o_ptr + base + rows[:, None] * D + dcol[None, :], acc, mask=(rows < L)[:, None])


@triton.jit
def chunk_kernel(q_ptr, k_ptr, v_ptr, o_ptr, L, D: tl.constexpr, CH: tl.constexpr, BDV: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * L * D
    vcol = tl.program_id(1) * BDV + tl.arange(0, BDV)
    dcol = tl.arange(0, D)
    r = tl.arange(0, CH)
    state = tl.zeros([D, BDV], dtype=tl.float32)
    for start in range(0, L, CH):
        rows = start + r
        ok = (rows < L)[:, None]
        q = tl.load(q_ptr + base + rows[:, None] * D + dcol[None, :], mask=ok, other=0.0)
        k = tl.load(k_ptr + base + rows[:, None] * D + dcol[None, :], mask=ok, other=0.0)
        v = tl.load(v_ptr + base + rows[:, None] * D + vcol[None, :], mask=ok, other=0.0)
        s = tl.dot(q, tl.trans(k))
        s = tl.where(r[None, :] <= r[:, None], s, 0.0)
        o = tl.dot(q, state.to(tl.float16))
        o = tl.dot(s.to(tl.float16), v, o)
        tl.store(o_ptr + base + rows[:, None] * D + vcol[None, :], o, mask=ok)
        state = tl.dot(tl.trans(k), v, state)


def _names(inputs):
    return inputs["Q"], inputs["K"], inputs["V"], inputs["out"]


def build_v0(inputs, params):
    q, k, v, out = _names(inputs)
    bh, length, d = params["BH"], params["L"], params["D"]
    grid = (triton.cdiv(length, BM), bh)

    def run():
        return quadratic_kernel[grid](
            q, k, v, out, length, D=d, BM=BM, BN=BN, num_warps=QWARPS, num_stages=QSTAGES
        )

    st = Stage(
        "linattn_quadratic",
        run,
        kernel=quadratic_kernel,
        tiling={"BM": BM, "BN": BN, "D": d, "grid": list(grid)},
        grid_blocks=grid[0] * grid[1],
    )
    return Plan([st], output=lambda: out)


def build_v1(inputs, params):
    q, k, v, out = _names(inputs)
    bh, length, d = params["BH"], params["L"], params["D"]
    grid = (bh, d // BDV)

    def run():
        return chunk_kernel[grid](q, k, v, out, length, D=d, CH=CH, BDV=BDV, num_warps=CWARPS)

    st = Stage(
        "linattn_chunks",
        run,
        kernel=chunk_kernel,
        tiling={"CH": CH, "BDV": BDV, "D": d, "grid": list(grid)},
        grid_blocks=grid[0] * grid[1],
    )
    return Plan([st], output=lambda: out)
