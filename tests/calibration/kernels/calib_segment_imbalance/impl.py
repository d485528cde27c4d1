"""Triton code of calib_segment_imbalance (imported only by the profiling worker).

One kernel for both versions: a program sums the rows start .. end-1 of x [rows, D] (a [BLOCK_R, D]
tile per step, fp32 accumulation) and writes the sum into row ``seg`` of out. What a program gets is
a work list (seg, start, end) made once with the graph (not timed):

    v0: one item per segment (its whole row range), the result stored (ATOMIC=False);
    v1: one item per CHUNK rows of a segment (short segments whole), the partial sums added with
        relaxed atomics into out, zeroed first in the stage (ATOMIC=True).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_R = 32  # rows per step: a [32, 128] tile, 8 KB of bf16
WARPS = 4


@triton.jit
def segment_sum_kernel(
    x_ptr,
    seg_ptr,
    start_ptr,
    end_ptr,
    out_ptr,
    D,
    ATOMIC: tl.constexpr,
    BLOCK_R: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    w = tl.program_id(0)
    seg = tl.load(seg_ptr + w).to(tl.int64)
    start = tl.load(start_ptr + w)
    end = tl.load(end_ptr + w)
    cols = tl.arange(0, BLOCK_D)
    cmask = cols < D
    acc = tl.zeros((BLOCK_R, BLOCK_D), tl.float32)
    for r0 in range(start, end, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        m = (rows[:, None] < end) & cmask[None, :]
        tile = tl.load(x_ptr + rows[:, None].to(tl.int64) * D + cols[None, :], mask=m, other=0.0)
        acc += tile.to(tl.float32)
    s = tl.sum(acc, axis=0)
    if ATOMIC:
        tl.atomic_add(out_ptr + seg * D + cols, s, mask=cmask, sem="relaxed")
    else:
        tl.store(out_ptr + seg * D + cols, s, mask=cmask)


def _build(inputs, p, suffix, atomic):
    x, out = inputs["x"], inputs["out"]
    seg, start, end = (inputs[k + suffix] for k in ("item_seg", "item_start", "item_end"))
    d = p["D"]
    block_d = triton.next_power_of_2(d)
    programs = seg.numel()
    tiling = {
        "BLOCK_R": BLOCK_R,
        "BLOCK_D": block_d,
        "num_warps": WARPS,
        "work_items": "chunks" if atomic else "segments",
        "programs": programs,
    }

    def run():
        if atomic:
            out.zero_()
        return segment_sum_kernel[(programs,)](
            x, seg, start, end, out, d, ATOMIC=atomic, BLOCK_R=BLOCK_R, BLOCK_D=block_d, num_warps=WARPS
        )

    return Plan(
        [Stage("segment_sum", run, kernel=segment_sum_kernel, tiling=tiling, grid_blocks=programs)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, "", False)


def build_v1(inputs, p):
    return _build(inputs, p, "_chunks", True)
