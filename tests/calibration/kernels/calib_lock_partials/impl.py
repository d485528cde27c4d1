"""Triton code of calib_lock_partials (imported only by the profiling worker).

partials_kernel: one program ROWS rows of dy * xhat summed down the rows (RB rows a step, all N columns in one
BN-wide tile), then merged into buffer p % GROUP under that buffer's lock (the Triton layer-norm tutorial's
_layer_norm_bwd_dx_fused merge: spin on tl.atomic_cas, the first program to arrive stores, the later ones add,
tl.debug_barrier, release with tl.atomic_xchg). finish_kernel: one program sums the GROUP buffers that were written
into dw and resets the counts for the next run. v0 GROUP = 1, v1 GROUP = 64.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

RB, WARPS = 8, 8


@triton.jit
def partials_kernel(
    dy_ptr,
    xh_ptr,
    buf_ptr,
    lock_ptr,
    count_ptr,
    M,
    N,
    ROWS,
    GROUP: tl.constexpr,
    RB: tl.constexpr,
    BN: tl.constexpr,
):
    pid = tl.program_id(0)
    cols = tl.arange(0, BN)
    cmask = cols < N
    r = tl.arange(0, RB)
    acc = tl.zeros((RB, BN), tl.float32)
    row0 = pid * ROWS
    for i in range(0, ROWS, RB):
        rows = row0 + i + r
        m = (rows < M)[:, None] & cmask[None, :]
        offs = rows.to(tl.int64)[:, None] * N + cols[None, :]
        a = tl.load(dy_ptr + offs, mask=m, other=0.0).to(tl.float32)
        b = tl.load(xh_ptr + offs, mask=m, other=0.0).to(tl.float32)
        acc += a * b
    part = tl.sum(acc, axis=0)
    g = pid % GROUP
    lock = lock_ptr + g
    count = count_ptr + g
    buf = buf_ptr + g * N + cols
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    c = tl.load(count, cache_modifier=".cg")
    if c == 0:  # the first program to take this lock stores, the later ones add
        tl.atomic_xchg(count, 1)
    else:
        part += tl.load(buf, mask=cmask, other=0.0, cache_modifier=".cg")
    tl.store(buf, part, mask=cmask)
    tl.debug_barrier()  # every thread's store done before the lock is released
    tl.atomic_xchg(lock, 0)


@triton.jit
def finish_kernel(buf_ptr, count_ptr, out_ptr, N, GROUP: tl.constexpr, BN: tl.constexpr):
    cols = tl.arange(0, BN)
    cmask = cols < N
    acc = tl.zeros((BN,), tl.float32)
    for g in range(GROUP):
        c = tl.load(count_ptr + g)
        v = tl.load(buf_ptr + g * N + cols, mask=cmask, other=0.0)
        acc += tl.where(c > 0, v, 0.0)
    tl.store(out_ptr + cols, acc, mask=cmask)
    tl.debug_barrier()  # every count read before they are reset
    tl.store(count_ptr + tl.arange(0, GROUP), tl.zeros((GROUP,), tl.int32))


def build(inputs, params, version, groups):
    dy, xh, out = inputs["dy"], inputs["xhat"], inputs["out"]
    locks, counts, buf = inputs[f"locks_{version}"], inputs[f"counts_{version}"], inputs[f"buf_{version}"]
    m, n, rows = params["M"], params["N"], params["ROWS"]
    if rows % RB:
        raise ValueError(f"ROWS must be a multiple of {RB}")
    bn = triton.next_power_of_2(n)
    grid = (triton.cdiv(m, rows),)
    name = "partials_one_lock" if groups == 1 else f"partials_{groups}_locks"

    def run_partials():
        return partials_kernel[grid](
            dy, xh, buf, locks, counts, m, n, rows, GROUP=groups, RB=RB, BN=bn, num_warps=WARPS
        )

    def run_finish():
        return finish_kernel[(1,)](buf, counts, out, n, GROUP=groups, BN=bn, num_warps=WARPS)

    tiling = {"RB": RB, "BN": bn, "ROWS": rows, "GROUP": groups, "num_warps": WARPS, "grid": list(grid)}
    return Plan(
        [
            Stage(name, run_partials, kernel=partials_kernel, tiling=tiling, grid_blocks=grid[0]),
            Stage(
                "finish", run_finish, kernel=finish_kernel, tiling={"BN": bn, "GROUP": groups}, grid_blocks=1
            ),
        ],
        output=lambda: out,
    )
