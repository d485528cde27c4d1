"""Triton code of calib_cas_max (imported only by the profiling worker).

One program of 4 warps per BLOCK = 1024 values; out reset to -inf (a fill) before the kernel in both:

    v0: cas_max_kernel: old = load(out[seg]); while any lane is not done: prev = atomic_cas(target, old,
        max(old, x)) (target: out[seg] for the lanes still trying, a private dummy word for the others);
        done |= prev == old; old = prev (as bit patterns: the CAS compares int32 words);
    v1: native_max_kernel: tl.atomic_max(out + seg, x, sem="relaxed").
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 1024, 4
# A bound on the retry loop (a safeguard far above the expected tries): a fault shows as a wrong result.
MAX_TRIES = 4096


@triton.jit
def cas_max_kernel(x_ptr, seg_ptr, out_ptr, dummy_ptr, n, BLOCK: tl.constexpr, MAX_TRIES: tl.constexpr):
    lane = tl.arange(0, BLOCK)
    offs = tl.program_id(0) * BLOCK + lane
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    seg = tl.load(seg_ptr + offs, mask=mask, other=0)
    word = out_ptr.to(tl.pointer_type(tl.int32)) + seg
    idle = dummy_ptr.to(tl.pointer_type(tl.int32)) + lane
    old = tl.load(word, mask=mask, other=0)
    done = offs >= n
    tries = 0
    while (tl.sum((~done).to(tl.int32), 0) > 0) & (tries < MAX_TRIES):
        new = tl.maximum(old.to(tl.float32, bitcast=True), x).to(tl.int32, bitcast=True)
        ptr = tl.where(done, idle, word)
        prev = tl.atomic_cas(ptr, tl.where(done, 0, old), tl.where(done, 0, new), sem="relaxed")
        done = done | (prev == old)
        old = tl.where(done, old, prev)
        tries += 1


@triton.jit
def native_max_kernel(x_ptr, seg_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    seg = tl.load(seg_ptr + offs, mask=mask, other=0)
    tl.atomic_max(out_ptr + seg, x, mask=mask, sem="relaxed")


def build_v0(inputs, p):
    x, seg, out, dummy = inputs["x"], inputs["seg"], inputs["out"], inputs["dummy"]
    n = x.numel()
    grid = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "MAX_TRIES": MAX_TRIES, "num_warps": WARPS, "grid": [grid]}

    def run():
        out.fill_(float("-inf"))
        return cas_max_kernel[(grid,)](
            x, seg, out, dummy, n, BLOCK=BLOCK, MAX_TRIES=MAX_TRIES, num_warps=WARPS
        )

    return Plan(
        [Stage("scatter_max", run, kernel=cas_max_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )


def build_v1(inputs, p):
    x, seg, out = inputs["x"], inputs["seg"], inputs["out"]
    n = x.numel()
    grid = triton.cdiv(n, BLOCK)
    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": [grid]}

    def run():
        out.fill_(float("-inf"))
        return native_max_kernel[(grid,)](x, seg, out, n, BLOCK=BLOCK, num_warps=WARPS)

    return Plan(
        [Stage("scatter_max", run, kernel=native_max_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )
