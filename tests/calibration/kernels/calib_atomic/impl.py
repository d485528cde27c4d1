"""Triton code of calib_atomic (imported only by the profiling worker).

One kernel for both versions, ``GROUP`` (a constexpr) is the only difference:

* each program loads BLOCK contiguous elements (the same loads in both versions);
* it reduces them in groups of GROUP elements and atomically adds each group's sum into the
  one accumulator ``acc[0]``: BLOCK / GROUP atomics per program, all on one address.
  v0: GROUP = 128 -> 64 atomics per program; v1: GROUP = BLOCK -> one (tl.sum, then one atomic);
* self-resetting epilogue, identical in both: after its adds (a barrier orders every thread's
  atomics before it) the program takes a ticket from ``count[0]``; the program that draws the
  last ticket reads the total from ``acc`` (an atomic add of 0), writes it to ``out[0]`` and
  resets ``acc`` and ``count`` to 0. So the stage is ONE kernel launch that leaves
  acc = count = 0 for the next launch: no memset kernel before it (the profiler launches the
  stage many times).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK = 8192       # elements per program (32 per thread at 8 warps: eight 16-byte loads)
NUM_WARPS = 8
V0_GROUP = 128     # v0: one atomic per 128 elements -> n / 128 atomics on acc[0]


@triton.jit
def sum_atomic_kernel(x_ptr, acc_ptr, count_ptr, out_ptr, n, BLOCK: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if GROUP == BLOCK:
        # v1: the block's sum in registers/shared memory, then one atomic.
        tl.atomic_add(acc_ptr, tl.sum(x, axis=0))
    else:
        # v0: BLOCK // GROUP partial sums, each atomically added to the same address.
        part = tl.sum(tl.reshape(x, [BLOCK // GROUP, GROUP]), axis=1)
        tl.atomic_add(acc_ptr + tl.zeros([BLOCK // GROUP], dtype=tl.int32), part)
    # Every thread's adds before this program's ticket (acq_rel atomics at GPU scope order the
    # ticket after them for the program that sees it).
    tl.debug_barrier()
    ticket = tl.atomic_add(count_ptr, 1)
    if ticket == tl.num_programs(0) - 1:
        # Every other program has added and drawn its ticket: read the total atomically (an add
        # of 0 at GPU scope), publish it, and reset the workspace for the next launch.
        total = tl.atomic_add(acc_ptr, 0.0)
        tl.store(out_ptr, total)
        tl.store(acc_ptr, 0.0)
        tl.store(count_ptr, 0)


def build(inputs, params, group):
    x, acc, count, out = inputs["x"], inputs["acc"], inputs["count"], inputs["out"]
    n = params["n"]
    group = min(group, BLOCK)
    programs = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "GROUP": group, "num_warps": NUM_WARPS, "num_stages": 1, "programs": programs,
              "atomics_per_program": BLOCK // group, "atomics_on_acc": programs * (BLOCK // group)}

    def run():
        return sum_atomic_kernel[(programs,)](x, acc, count, out, n, BLOCK=BLOCK, GROUP=group,
                                              num_warps=NUM_WARPS, num_stages=1)

    return Plan(stages=[Stage("sum", run, kernel=sum_atomic_kernel, tiling=tiling, grid_blocks=programs)],
                output=lambda: out)


def build_v0(inputs, params):
    return build(inputs, params, V0_GROUP)


def build_v1(inputs, params):
    return build(inputs, params, BLOCK)
