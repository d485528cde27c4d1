"""Triton code of calib_serial_scan (imported only by the profiling worker).

A program per (sequence b, block of BLOCK_C channels), 4 warps, the state h fp32 in registers:

    v0: step_kernel: for t in range(T): load a_t, x_t; h = a_t * h + x_t; store h;
    v1: chunk_kernel: for t0 in range(0, T, CHUNK): load [CHUNK, BLOCK_C] tiles of a and x (steps past
        T masked to the identity a=1, x=0), scan them along time with tl.associative_scan, apply the
        carry (y = A_cum * h + X_cum), store the tile, h = the chunk's last row of y (selected with
        tl.where and summed: tl.reduce with this non-commutative combine gave wrong carries on the GPU,
        Triton 3.6, in the first quick check).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_C = 128  # channels per program (one per thread at 4 warps)
CHUNK = 32  # time steps per tile (v1)
WARPS = 4


@triton.jit
def step_kernel(a_ptr, x_ptr, y_ptr, T, C, BLOCK_C: tl.constexpr):
    b = tl.program_id(1)
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < C
    base = b.to(tl.int64) * T * C + cols
    h = tl.zeros((BLOCK_C,), tl.float32)
    for t in range(T):
        off = base + t * C
        a = tl.load(a_ptr + off, mask=cmask, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + off, mask=cmask, other=0.0).to(tl.float32)
        h = a * h + x
        tl.store(y_ptr + off, h.to(y_ptr.dtype.element_ty), mask=cmask)


@triton.jit
def _combine(a1, x1, a2, x2):
    return a1 * a2, a2 * x1 + x2


@triton.jit
def chunk_kernel(a_ptr, x_ptr, y_ptr, T, C, BLOCK_C: tl.constexpr, CHUNK: tl.constexpr):
    b = tl.program_id(1)
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    steps = tl.arange(0, CHUNK)
    cmask = cols < C
    base = b.to(tl.int64) * T * C
    h = tl.zeros((BLOCK_C,), tl.float32)
    for t0 in range(0, T, CHUNK):
        off = base + (t0 + steps)[:, None].to(tl.int64) * C + cols[None, :]
        mask = ((t0 + steps)[:, None] < T) & cmask[None, :]
        a = tl.load(a_ptr + off, mask=mask, other=1.0).to(tl.float32)
        x = tl.load(x_ptr + off, mask=mask, other=0.0).to(tl.float32)
        a_cum, x_cum = tl.associative_scan((a, x), axis=0, combine_fn=_combine)
        y = a_cum * h[None, :] + x_cum
        tl.store(y_ptr + off, y.to(y_ptr.dtype.element_ty), mask=mask)
        # the carry: the chunk's last row (steps past T are the identity, so the last row is h at T - 1)
        h = tl.sum(tl.where(steps[:, None] == CHUNK - 1, y, 0.0), axis=0)


def _build(inputs, p, chunked):
    a, x, y = inputs["a"], inputs["x"], inputs["y"]
    bsz, t, c = a.shape
    grid = (triton.cdiv(c, BLOCK_C), bsz)
    tiling = {"BLOCK_C": BLOCK_C, "num_warps": WARPS, "grid": list(grid), "CHUNK": CHUNK if chunked else 1}
    kernel = chunk_kernel if chunked else step_kernel

    def run():
        if chunked:
            return chunk_kernel[grid](a, x, y, t, c, BLOCK_C=BLOCK_C, CHUNK=CHUNK, num_warps=WARPS)
        return step_kernel[grid](a, x, y, t, c, BLOCK_C=BLOCK_C, num_warps=WARPS)

    return Plan(
        [Stage("scan", run, kernel=kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])],
        output=lambda: y,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
