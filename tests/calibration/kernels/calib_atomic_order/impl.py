"""Triton code of calib_atomic_order (imported only by the profiling worker).

One kernel for both versions: a program adds BLOCK_N rows of ``src`` into the rows of ``out`` that
``idx`` names (a scatter-add, ``out.index_add_(0, idx, src)``), one ``tl.atomic_add`` per element.
The constexpr ``SEM`` is the atomics' memory-ordering semantics:

    v0: SEM="acq_rel" (tl.atomic_add's default): every atomic is ordered against the thread's other
        memory accesses (a fence before it, an acquire after it);
    v1: SEM="relaxed": the same atomics, unordered (fire-and-forget reductions).

The stage zeroes ``out`` first (both versions): an index_add into a fresh gradient buffer.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_N = 16  # rows per program: a [16, 128] tile, 16 elements per thread at 4 warps
WARPS = 4


@triton.jit
def scatter_add_kernel(
    src_ptr, idx_ptr, out_ptr, N, D, SEM: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr
):
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = tl.arange(0, BLOCK_D)
    rmask = rows < N
    mask = rmask[:, None] & (cols[None, :] < D)
    dst = tl.load(idx_ptr + rows, mask=rmask, other=0).to(tl.int64)
    vals = tl.load(src_ptr + rows[:, None].to(tl.int64) * D + cols[None, :], mask=mask, other=0.0)
    tl.atomic_add(out_ptr + dst[:, None] * D + cols[None, :], vals.to(tl.float32), mask=mask, sem=SEM)


def _build(inputs, p, sem):
    src, idx, out = inputs["src"], inputs["idx"], inputs["out"]
    n, d = p["N"], p["D"]
    block_d = triton.next_power_of_2(d)
    programs = triton.cdiv(n, BLOCK_N)
    tiling = {"BLOCK_N": BLOCK_N, "BLOCK_D": block_d, "num_warps": WARPS, "SEM": sem, "programs": programs}

    def run():
        out.zero_()
        return scatter_add_kernel[(programs,)](
            src, idx, out, n, d, SEM=sem, BLOCK_N=BLOCK_N, BLOCK_D=block_d, num_warps=WARPS
        )

    return Plan(
        [Stage("scatter_add", run, kernel=scatter_add_kernel, tiling=tiling, grid_blocks=programs)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, "acq_rel")


def build_v1(inputs, p):
    return _build(inputs, p, "relaxed")
