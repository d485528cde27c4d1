"""Triton code of calib_cache_capacity (imported only by the profiling worker).

One kernel for both versions, a program per (sequence, head), BLOCK_T = 128 cache slots per step, an online
softmax in fp32, the scores at t >= lens[b] masked to -inf; the loop's bound chosen by a constexpr:

    v0: TO_LENGTH=False: for start in range(0, CAP, BLOCK_T) (the cache's capacity);
    v1: TO_LENGTH=True: for start in range(0, lens[b], BLOCK_T).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_T = 128
WARPS = 4


@triton.jit
def decode_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    lens_ptr,
    out_ptr,
    H,
    CAP,
    scale,
    D: tl.constexpr,
    TO_LENGTH: tl.constexpr,
    BLOCK_T: tl.constexpr,
):
    pid = tl.program_id(0)
    b = pid // H
    n = tl.load(lens_ptr + b)
    d = tl.arange(0, D)
    tt = tl.arange(0, BLOCK_T)
    q = tl.load(q_ptr + pid.to(tl.int64) * D + d).to(tl.float32) * scale
    kv = pid.to(tl.int64) * CAP * D
    m = tl.full((), float("-inf"), tl.float32)
    denom = tl.zeros((), tl.float32)
    acc = tl.zeros((D,), tl.float32)
    if TO_LENGTH:
        hi = n
    else:
        hi = CAP
    for start in range(0, hi, BLOCK_T):
        t = start + tt
        offs = kv + t[:, None].to(tl.int64) * D + d[None, :]
        k = tl.load(k_ptr + offs, mask=t[:, None] < CAP, other=0.0).to(tl.float32)
        s = tl.sum(k * q[None, :], axis=1)
        s = tl.where(t < n, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=0))
        alpha = tl.exp(m - m_new)
        pr = tl.exp(s - m_new)
        v = tl.load(v_ptr + offs, mask=t[:, None] < CAP, other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(pr[:, None] * v, axis=0)
        denom = denom * alpha + tl.sum(pr, axis=0)
        m = m_new
    tl.store(out_ptr + pid.to(tl.int64) * D + d, (acc / denom).to(out_ptr.dtype.element_ty))


def _build(inputs, p, to_length):
    q, k, v, lens, out = inputs["q"], inputs["k"], inputs["v"], inputs["lens"], inputs["out"]
    b, h, cap, d = k.shape
    programs = b * h
    scale = 1.0 / d**0.5
    tiling = {"BLOCK_T": BLOCK_T, "D": d, "TO_LENGTH": to_length, "num_warps": WARPS, "grid": [programs]}

    def run():
        return decode_kernel[(programs,)](
            q, k, v, lens, out, h, cap, scale, D=d, TO_LENGTH=to_length, BLOCK_T=BLOCK_T, num_warps=WARPS
        )

    return Plan(
        [Stage("decode_attention", run, kernel=decode_kernel, tiling=tiling, grid_blocks=programs)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)
