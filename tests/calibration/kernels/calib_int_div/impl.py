"""Triton code of calib_int_div (imported only by the profiling worker).

out = x.permute(0, 2, 1, 3, 4, 5).contiguous() for a 6-d fp16 tensor x.

    v0: ``gather6_kernel``: the generic way, one program per BLOCK output elements; each element
        turns its int64 linear index into six coordinates with ``//`` and ``%`` by the output's
        sizes (runtime values, none a power of two) and dots them with x's strides: five integer
        divisions and remainders per element (LLVM tests whether both operands fit in 32 bits and
        then divides in 32 bits: I2F, MUFU.RCP, F2I and a dozen IMAD/IADD/ISETP per division).
    v1: ``rows_kernel``: the permutation leaves the last three dimensions in place, contiguous in
        both tensors, so they collapse into one run of L = d3·d4·d5 elements: program (r, c) copies
        BLOCK elements of output row r = (i0, i2, i1), whose coordinates it computes once, in
        int32 scalars. No division per element.

Same loads and stores per element (fp16, 2 bytes each way), same warps.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK = 1024
WARPS = 4


@triton.jit
def gather6_kernel(x_ptr, out_ptr, n, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, BLOCK: tl.constexpr):
    """out's linear index i (int64) -> its coordinates (o0..o5) over out's sizes (s0..s5), x's
    element at sum(o_k * t_k), t being x's strides permuted like its dimensions."""
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    r = i
    o5 = r % s5
    r = r // s5
    o4 = r % s4
    r = r // s4
    o3 = r % s3
    r = r // s3
    o2 = r % s2
    r = r // s2
    o1 = r % s1
    o0 = r // s1
    src = o0 * t0 + o1 * t1 + o2 * t2 + o3 * t3 + o4 * t4 + o5 * t5
    tl.store(out_ptr + i, tl.load(x_ptr + src, mask=mask), mask=mask)


@triton.jit
def rows_kernel(x_ptr, out_ptr, L, s1, s2, t0, t1, t2, BLOCK: tl.constexpr):
    """Program (r, c): output row r = (i0, i1, i2) over out's sizes (., s1, s2), x's row at
    i0*t0 + i1*t1 + i2*t2 (t: x's strides permuted), elements c*BLOCK .. of the run of L."""
    r = tl.program_id(0)
    i2 = r % s2
    i1 = (r // s2) % s1
    i0 = r // (s2 * s1)
    src_row = i0.to(tl.int64) * t0 + i1.to(tl.int64) * t1 + i2.to(tl.int64) * t2
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < L
    v = tl.load(x_ptr + src_row + offs, mask=mask)
    tl.store(out_ptr + r.to(tl.int64) * L + offs, v, mask=mask)


def _shape_strides(x):
    perm = (0, 2, 1, 3, 4, 5)
    sizes = [x.shape[d] for d in perm]
    strides = [x.stride(d) for d in perm]
    return sizes, strides


def build_v0(inputs, p):
    x, out = inputs["x"], inputs["out"]
    (_, s1, s2, s3, s4, s5), t = _shape_strides(x)
    n = x.numel()
    programs = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "num_stages": 1, "programs": programs,
              "index": "int64 // and % by 5 runtime sizes per element"}

    def run():
        return gather6_kernel[(programs,)](x, out, n, s1, s2, s3, s4, s5, *t, BLOCK=BLOCK, num_warps=WARPS,
                                           num_stages=1)

    return Plan([Stage("permute", run, kernel=gather6_kernel, tiling=tiling, grid_blocks=programs)],
                output=lambda: out)


def build_v1(inputs, p):
    x, out = inputs["x"], inputs["out"]
    (s0, s1, s2, s3, s4, s5), (t0, t1, t2, *_) = _shape_strides(x)
    L = s3 * s4 * s5
    rows = s0 * s1 * s2
    chunks = triton.cdiv(L, BLOCK)
    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "num_stages": 1, "programs": rows * chunks,
              "index": f"rows of L = {L} contiguous elements, coordinates once per program (int32)"}

    def run():
        return rows_kernel[(rows, chunks)](x, out, L, s1, s2, t0, t1, t2, BLOCK=BLOCK, num_warps=WARPS,
                                           num_stages=1)

    return Plan([Stage("permute", run, kernel=rows_kernel, tiling=tiling, grid_blocks=rows * chunks)],
                output=lambda: out)
