"""Triton code of calib_chained_scan (imported only by the profiling worker).

One kernel for both versions, 8 warps a program, BLOCK = 4096 values a tile, the tile id from an atomic
counter; a tile's status word is flag << 32 | value (0 not ready, 1 aggregate, 2 inclusive prefix):

    v0: LOOKBACK=False: spin on status[t-1] until its flag is 2; publish (2, prefix + aggregate);
    v1: LOOKBACK=True: publish (1, aggregate) at once; walk back from t-1 adding values until a flag 2 is read
        (spinning on a 0); publish (2, prefix + aggregate).

Values are non-negative and below 2^31: the low word is the value (an int64 -> int32 truncation reads it).
Both then store prefix + the tile's exclusive local scan. The status words and the counter are zeroed (a
memset) before each run.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 4096, 8
# A bound on any one wait (a safeguard, ~100x the longest wait by design): a fault shows as a wrong result,
# not a hung GPU.
MAX_SPIN = 1 << 16


@triton.jit
def scan_kernel(
    x_ptr,
    out_ptr,
    status_ptr,
    counter_ptr,
    n,
    BLOCK: tl.constexpr,
    LOOKBACK: tl.constexpr,
    MAX_SPIN: tl.constexpr,
):
    t = tl.atomic_add(counter_ptr, 1)  # tiles in the order the programs start
    offs = t * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    agg = tl.sum(x, 0)
    prefix = agg * 0
    if LOOKBACK:
        if t > 0:
            tl.atomic_xchg(status_ptr + t, (1 << 32) | agg.to(tl.int64))
        j = t - 1
        spins = 0
        while (j >= 0) & (spins < MAX_SPIN):
            w = tl.atomic_add(status_ptr + j, 0)
            f = w >> 32
            prefix += tl.where(f != 0, w.to(tl.int32), 0)
            j = tl.where(f == 2, -1, tl.where(f == 0, j, j - 1))
            spins += 1
    else:
        if t > 0:
            w = tl.atomic_add(status_ptr + t - 1, 0)
            spins = 0
            while ((w >> 32) != 2) & (spins < MAX_SPIN):
                w = tl.atomic_add(status_ptr + t - 1, 0)
                spins += 1
            prefix = w.to(tl.int32)
    tl.atomic_xchg(status_ptr + t, (2 << 32) | (prefix + agg).to(tl.int64))
    tl.store(out_ptr + offs, prefix + tl.cumsum(x, 0) - x, mask=m)


def _build(inputs, p, lookback):
    x, out, status, counter = (inputs[k] for k in ("x", "out", "status", "counter"))
    n = x.numel()
    grid = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "LOOKBACK": lookback, "num_warps": WARPS, "grid": [grid]}

    def run():
        status.zero_()
        counter.zero_()
        return scan_kernel[(grid,)](
            x, out, status, counter, n, BLOCK=BLOCK, LOOKBACK=lookback, MAX_SPIN=MAX_SPIN, num_warps=WARPS
        )

    return Plan(
        [Stage("scan", run, kernel=scan_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
