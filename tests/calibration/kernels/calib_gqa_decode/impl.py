"""Triton code of calib_gqa_decode (imported only by the profiling worker).

One kernel for both versions, BLOCK_T = 16 cached tokens a step, an online softmax in fp32 over a [HEADS, D]
query tile, the number of query heads per program chosen by a constexpr:

    v0: HEADS=1: a program per query head (pid -> sequence, KV head, head in group; the group's G programs
        adjacent), grid B·HKV·G;
    v1: HEADS=G: a program per KV head, grid B·HKV.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_T = 16
WARPS = 8


@triton.jit
def gqa_decode_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    out_ptr,
    S,
    scale,
    G: tl.constexpr,
    D: tl.constexpr,
    HEADS: tl.constexpr,
    BLOCK_T: tl.constexpr,
):
    pid = tl.program_id(0)
    chunks: tl.constexpr = G // HEADS
    kvh = pid // chunks  # (sequence, KV head), flattened
    h0 = kvh * G + (pid % chunks) * HEADS  # the first query head (flattened over sequences)
    hh = tl.arange(0, HEADS)
    d = tl.arange(0, D)
    tt = tl.arange(0, BLOCK_T)
    qo = (h0 + hh)[:, None].to(tl.int64) * D + d[None, :]
    q = tl.load(q_ptr + qo).to(tl.float32) * scale  # [HEADS, D]
    base = kvh.to(tl.int64) * S * D
    m = tl.full((HEADS,), float("-inf"), tl.float32)
    denom = tl.zeros((HEADS,), tl.float32)
    acc = tl.zeros((HEADS, D), tl.float32)
    for start in range(0, S, BLOCK_T):
        t = start + tt
        offs = base + t[:, None].to(tl.int64) * D + d[None, :]
        k = tl.load(k_ptr + offs, mask=t[:, None] < S, other=0.0).to(tl.float32)  # [T, D]
        s = tl.sum(q[:, None, :] * k[None, :, :], axis=2)  # [HEADS, T]
        s = tl.where(t[None, :] < S, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        pr = tl.exp(s - m_new[:, None])
        v = tl.load(v_ptr + offs, mask=t[:, None] < S, other=0.0).to(tl.float32)
        acc = acc * alpha[:, None] + tl.sum(pr[:, :, None] * v[None, :, :], axis=1)
        denom = denom * alpha + tl.sum(pr, axis=1)
        m = m_new
    tl.store(out_ptr + qo, (acc / denom[:, None]).to(out_ptr.dtype.element_ty))


def _build(inputs, p, heads):
    q, k, v, out = inputs["q"], inputs["k"], inputs["v"], inputs["out"]
    b, hkv, s, d = k.shape
    grp = q.shape[1] // hkv
    heads = grp if heads is None else heads
    programs = b * hkv * (grp // heads)
    scale = 1.0 / d**0.5
    tiling = {"BLOCK_T": BLOCK_T, "D": d, "G": grp, "HEADS": heads, "num_warps": WARPS, "grid": [programs]}

    def run():
        return gqa_decode_kernel[(programs,)](
            q, k, v, out, s, scale, G=grp, D=d, HEADS=heads, BLOCK_T=BLOCK_T, num_warps=WARPS
        )

    return Plan(
        [Stage("decode_attention", run, kernel=gqa_decode_kernel, tiling=tiling, grid_blocks=programs)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, 1)


def build_v1(inputs, p):
    return _build(inputs, p, None)
