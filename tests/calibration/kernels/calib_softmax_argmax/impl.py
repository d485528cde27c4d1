"""Triton code of calib_softmax_argmax (imported only by the profiling worker).

softmax_kernel: one program per row, 8 warps, BLOCK = 2048 columns a chunk: pass 1 the running maximum and
    the running sum of exponentials (online rescaling), pass 2 probs[row, :] = exp(x - max) / sum;
argmax_kernel: one program per row, the same chunks: each lane's running maximum and its index (replaced
    only when strictly greater), then the row's maximum and the least index holding it, out[row] (fp32).

v0: softmax(logits → probs), argmax(probs → out); v1: argmax(logits → out).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 2048, 8


@triton.jit
def softmax_kernel(x_ptr, p_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, V, BLOCK):
        ok = start + cols < V
        x = tl.load(x_ptr + row * V + start + cols, mask=ok, other=float("-inf"))
        m_new = tl.maximum(m, x)
        scale = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        s = s * scale + tl.where(ok, tl.exp(x - m_new), 0.0)
        m = m_new
    mx = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - mx)), axis=0)
    inv = 1.0 / total
    for start in range(0, V, BLOCK):
        ok = start + cols < V
        x = tl.load(x_ptr + row * V + start + cols, mask=ok, other=float("-inf"))
        tl.store(p_ptr + row * V + start + cols, tl.exp(x - mx) * inv, mask=ok)


@triton.jit
def argmax_kernel(x_ptr, out_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    best = tl.full((BLOCK,), float("-inf"), tl.float32)
    best_i = tl.zeros((BLOCK,), tl.int32)
    for start in range(0, V, BLOCK):
        ok = start + cols < V
        x = tl.load(x_ptr + row * V + start + cols, mask=ok, other=float("-inf"))
        take = x > best  # strictly greater: each lane keeps its first index of its maximum
        best_i = tl.where(take, start + cols, best_i)
        best = tl.where(take, x, best)
    mx = tl.max(best, axis=0)
    first = tl.min(tl.where(best == mx, best_i, V), axis=0)  # the first index of the row's maximum
    tl.store(out_ptr + row, first.to(tl.float32))


def _stage(name, kernel, args, b):
    grid = (b,)

    def run():
        return kernel[grid](*args, BLOCK=BLOCK, num_warps=WARPS)

    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": list(grid)}
    return Stage(name, run, kernel=kernel, tiling=tiling, grid_blocks=b)


def build_v0(inputs, params):
    x, probs, out, b, v = inputs["logits"], inputs["probs"], inputs["out"], params["B"], params["V"]
    stages = [
        _stage("softmax", softmax_kernel, (x, probs, v), b),
        _stage("argmax", argmax_kernel, (probs, out, v), b),
    ]
    return Plan(stages, output=lambda: out)


def build_v1(inputs, params):
    x, out, b, v = inputs["logits"], inputs["out"], params["B"], params["V"]
    return Plan([_stage("argmax", argmax_kernel, (x, out, v), b)], output=lambda: out)
