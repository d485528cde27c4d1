"""Triton code of calib_divergent_steps (imported only by the profiling worker).

One kernel for both versions: a program takes BLOCK items, runs its loop up to the largest step
count among them, and each item's update is kept only while the item still has steps left (its
lanes run every step regardless: Triton's form of a divergent loop). The versions differ only in
the order the items are handed over:

    v0: the items in their given order (step counts mixed within every program);
    v1: the items sorted by step count (a permutation made once with the data), each program's
        items of nearly equal count; the results written in that order and mapped back.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK = 1024  # items per program: 8 per thread at 4 warps
WARPS = 4


@triton.jit
def stepped_map_kernel(x_ptr, steps_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    steps = tl.load(steps_ptr + offs, mask=mask, other=0)
    z = tl.zeros((BLOCK,), tl.float32)
    for t in range(0, tl.max(steps)):
        zz = z * z
        nz = x + 0.5 * tl.exp2(-zz) + 0.25 * tl.rsqrt(1.0 + zz)
        z = tl.where(t < steps, nz, z)
    tl.store(z_ptr + offs, z, mask=mask)


def _build(inputs, p, suffix):
    x, steps, z = inputs["x" + suffix], inputs["steps" + suffix], inputs["z" + suffix]
    n = p["n"]
    programs = triton.cdiv(n, BLOCK)
    tiling = {
        "BLOCK": BLOCK,
        "num_warps": WARPS,
        "order": "sorted by steps" if suffix else "given",
        "programs": programs,
    }

    def run():
        return stepped_map_kernel[(programs,)](x, steps, z, n, BLOCK=BLOCK, num_warps=WARPS)

    if suffix:
        perm = inputs["perm"]

        def output():  # back to the given order (not timed)
            out = z.new_empty(z.shape)
            out[perm] = z
            return out

    else:

        def output():
            return z

    return Plan(
        [Stage("steps", run, kernel=stepped_map_kernel, tiling=tiling, grid_blocks=programs)], output=output
    )


def build_v0(inputs, p):
    return _build(inputs, p, "")


def build_v1(inputs, p):
    return _build(inputs, p, "_sorted")
