"""Triton code of calib_gemv_narrow (imported only by the profiling worker).

gemv_kernel: one program a row of W (4 warps); a loop over the row in steps of BLOCK_K: the tile of W and of
v loaded (masked at the row's end), their product summed (tl.sum: warp shuffles, shared memory, a barrier)
and added to the fp32 accumulator; y[row] stored.

v0: BLOCK_K = 128 (one fp16 a thread a step); v1: BLOCK_K = 2048 (16 a thread a step).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

WARPS = 4


@triton.jit
def gemv_kernel(w_ptr, v_ptr, out_ptr, K, BLOCK_K: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_K)
    acc = 0.0
    for k0 in range(0, K, BLOCK_K):
        ok = k0 + cols < K
        w = tl.load(w_ptr + row * K + k0 + cols, mask=ok, other=0.0).to(tl.float32)
        v = tl.load(v_ptr + k0 + cols, mask=ok, other=0.0).to(tl.float32)
        acc += tl.sum(w * v, axis=0)
    tl.store(out_ptr + row, acc)


def _build(name, block_k, inputs, params):
    w, v, out = inputs["W"], inputs["v"], inputs["out"]
    m, k = params["M"], params["K"]
    grid = (m,)

    def run():
        return gemv_kernel[grid](w, v, out, k, BLOCK_K=block_k, num_warps=WARPS)

    tiling = {"BLOCK_K": block_k, "num_warps": WARPS, "grid": list(grid)}
    stage = Stage(name, run, kernel=gemv_kernel, tiling=tiling, grid_blocks=m)
    return Plan([stage], output=lambda: out)


def build_v0(inputs, params):
    return _build("gemv_k128", 128, inputs, params)


def build_v1(inputs, params):
    return _build("gemv_k2048", 2048, inputs, params)
