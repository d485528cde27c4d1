"""Triton code of calib_histogram (imported only by the profiling worker).

One kernel for both versions; the constexpr ``PRIVATE`` is the only difference:

* each program reads BLOCK = 4096 contiguous int32 values (the same loads, grid and warps in
  both versions);
* v0 (PRIVATE=False): every value is one global atomic ``bins[x] += 1`` (relaxed, GPU scope):
  n atomics, all on the 256 addresses of ``bins`` (1 KB: 8 cache lines);
* v1 (PRIVATE=True): the block is counted in the program with ``tl.histogram`` (warp ballots,
  then the warps' counts combined in shared memory), then added to ``bins`` with one 256-wide
  atomic: 256 atomics per program, one per bin (8 warp instructions, each on one 128-byte line);
* self-resetting epilogue, identical in both (as calib_atomic's): after its adds (a barrier
  orders every thread's atomics before it) the program draws a ticket from ``count[0]`` (an
  acq_rel atomic: it releases this program's adds); the program that draws the last ticket
  takes every bin with an atomic exchange against 0 (reads the total and zeroes the bin in one
  operation), writes the totals to ``out`` and resets ``count`` to 0. So the stage is ONE kernel
  launch that leaves bins = count = 0 for the next launch: no memset kernel before it.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

NUM_BINS = 256
BLOCK = 4096       # values per program (16 per thread at 8 warps: four 16-byte loads)
NUM_WARPS = 8


@triton.jit
def histogram_kernel(x_ptr, bins_ptr, count_ptr, out_ptr, n,
                     NUM_BINS: tl.constexpr, BLOCK: tl.constexpr, PRIVATE: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    bins = tl.arange(0, NUM_BINS)
    if PRIVATE:
        # v1: count the block in the program, then one atomic per bin.
        tl.atomic_add(bins_ptr + bins, tl.histogram(x, NUM_BINS, mask=mask), sem="relaxed")
    else:
        # v0: one global atomic per value, every one on one of the 256 bin addresses.
        tl.atomic_add(bins_ptr + x, tl.full([BLOCK], 1, tl.int32), mask=mask, sem="relaxed")
    # Every thread's adds before this program's ticket (the acq_rel ticket releases them).
    tl.debug_barrier()
    ticket = tl.atomic_add(count_ptr, 1)
    if ticket == tl.num_programs(0) - 1:
        # Every other program has added and drawn its ticket: take the totals and zero the bins
        # in one atomic exchange, publish them, and reset the ticket counter for the next launch.
        total = tl.atomic_xchg(bins_ptr + bins, tl.zeros([NUM_BINS], dtype=tl.int32))
        tl.store(out_ptr + bins, total)
        tl.store(count_ptr, 0)


def build(inputs, params, private):
    x, bins, count, out = inputs["x"], inputs["bins"], inputs["count"], inputs["out"]
    n = params["n"]
    programs = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "NUM_BINS": NUM_BINS, "PRIVATE": private, "num_warps": NUM_WARPS,
              "num_stages": 1, "programs": programs,
              "global_atomics_on_bins": programs * NUM_BINS if private else n}

    def run():
        return histogram_kernel[(programs,)](x, bins, count, out, n, NUM_BINS=NUM_BINS, BLOCK=BLOCK, PRIVATE=private,
                                             num_warps=NUM_WARPS, num_stages=1)

    return Plan(stages=[Stage("histogram", run, kernel=histogram_kernel, tiling=tiling, grid_blocks=programs)],
                output=lambda: out)


def build_v0(inputs, params):
    return build(inputs, params, False)


def build_v1(inputs, params):
    return build(inputs, params, True)
