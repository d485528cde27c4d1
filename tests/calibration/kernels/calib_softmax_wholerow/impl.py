"""Triton code of calib_softmax_wholerow (imported only by the profiling worker).

whole_row_kernel (v0): the tutorial's fused softmax: a program a row, the row loaded as one [BLOCK] tile
(masked past V with -inf), z = x - max(x), e = exp(z), out = e / sum(e); BLOCK = next_power_of_2(V), 16 warps.
online_kernel (v1): a program a row, 8 warps; pass 1 over CHUNK-wide chunks: m' = max(m, max(chunk)), s = s
exp(m - m') + sum(exp(chunk - m')); pass 2: out = exp(chunk - m) / s chunk by chunk.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

WARPS_V0, CHUNK, WARPS_V1 = 16, 4096, 8


@triton.jit
def whole_row_kernel(x_ptr, o_ptr, V, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * V
    offs = tl.arange(0, BLOCK)
    m = offs < V
    x = tl.load(x_ptr + base + offs, mask=m, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(o_ptr + base + offs, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def online_kernel(x_ptr, o_ptr, V, CHUNK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * V
    mx = tl.full([], -float("inf"), dtype=tl.float32)
    s = tl.zeros([], dtype=tl.float32)
    for start in range(0, V, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        x = tl.load(x_ptr + base + offs, mask=offs < V, other=-float("inf"))
        m_new = tl.maximum(mx, tl.max(x, axis=0))
        s = s * tl.exp(mx - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        mx = m_new
    for start in range(0, V, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        valid = offs < V
        x = tl.load(x_ptr + base + offs, mask=valid, other=-float("inf"))
        tl.store(o_ptr + base + offs, tl.exp(x - mx) / s, mask=valid)


def build_v0(inputs, params):
    x, out = inputs["x"], inputs["out"]
    r, v = params["R"], params["V"]
    block = triton.next_power_of_2(v)

    def run():
        return whole_row_kernel[(r,)](x, out, v, BLOCK=block, num_warps=WARPS_V0)

    st = Stage(
        "softmax_whole_row",
        run,
        kernel=whole_row_kernel,
        tiling={"BLOCK": block, "num_warps": WARPS_V0, "grid": [r]},
        grid_blocks=r,
    )
    return Plan([st], output=lambda: out)


def build_v1(inputs, params):
    x, out = inputs["x"], inputs["out"]
    r, v = params["R"], params["V"]

    def run():
        return online_kernel[(r,)](x, out, v, CHUNK=CHUNK, num_warps=WARPS_V1)

    st = Stage(
        "softmax_online_chunks",
        run,
        kernel=online_kernel,
        tiling={"CHUNK": CHUNK, "num_warps": WARPS_V1, "grid": [r]},
        grid_blocks=r,
    )
    return Plan([st], output=lambda: out)
