"""Triton code of calib_atomic_order (imported only by the profiling worker).

One kernel for both versions, 4 warps a program, EPP = 256 consecutive edges a program in chunks of
BLOCK_E = 32 edges x D features; the atomics' memory semantics chosen by a constexpr:

    v0: RELAXED=False: tl.atomic_add(out[dst, :], w · x[src, :])  (sem defaults to "acq_rel");
    v1: RELAXED=True:  tl.atomic_add(..., sem="relaxed").

out is zeroed (a memset) before the kernel in both.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

EPP, BLOCK_E, WARPS = 256, 32, 4


@triton.jit
def aggregate_kernel(
    x_ptr,
    src_ptr,
    dst_ptr,
    w_ptr,
    out_ptr,
    n_edges,
    D: tl.constexpr,
    EPP: tl.constexpr,
    BLOCK_E: tl.constexpr,
    RELAXED: tl.constexpr,
):
    pid = tl.program_id(0)
    feats = tl.arange(0, D)
    for e0 in range(0, EPP, BLOCK_E):
        e = pid * EPP + e0 + tl.arange(0, BLOCK_E)
        m = e < n_edges
        s = tl.load(src_ptr + e, mask=m, other=0)
        t = tl.load(dst_ptr + e, mask=m, other=0)
        w = tl.load(w_ptr + e, mask=m, other=0.0)
        v = tl.load(x_ptr + s.to(tl.int64)[:, None] * D + feats[None, :], mask=m[:, None], other=0.0)
        msg = v.to(tl.float32) * w[:, None]
        ptrs = out_ptr + t.to(tl.int64)[:, None] * D + feats[None, :]
        if RELAXED:
            tl.atomic_add(ptrs, msg, mask=m[:, None], sem="relaxed")
        else:
            tl.atomic_add(ptrs, msg, mask=m[:, None])


def _build(inputs, p, relaxed):
    x, src, dst, w, out = (inputs[k] for k in ("x", "src", "dst", "w", "out"))
    n_edges, d = src.numel(), x.shape[1]
    grid = triton.cdiv(n_edges, EPP)
    tiling = {"EPP": EPP, "BLOCK_E": BLOCK_E, "D": d, "RELAXED": relaxed, "num_warps": WARPS, "grid": [grid]}

    def run():
        out.zero_()  # the sums start at zero (both versions)
        return aggregate_kernel[(grid,)](
            x, src, dst, w, out, n_edges, D=d, EPP=EPP, BLOCK_E=BLOCK_E, RELAXED=relaxed, num_warps=WARPS
        )

    return Plan(
        [Stage("aggregate", run, kernel=aggregate_kernel, tiling=tiling, grid_blocks=grid)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
