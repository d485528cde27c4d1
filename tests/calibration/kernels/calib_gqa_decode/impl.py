"""Triton code of calib_gqa_decode (imported only by the profiling worker).

One kernel for both versions, BLOCK_T = 64 cached tokens a step, an online softmax in fp32 over a query tile of
ROWS = 16 rows (tl.dot's smallest M; the rows past HEADS masked to zero and not stored), the scores and the
weighted sum by tl.dot on the tensor cores (fp32 accumulation), the number of query heads per program chosen by
a constexpr:

    v0: HEADS=1: a program per query head (pid -> sequence, KV head, head in group; the group's G programs
        adjacent), grid B·HKV·G;
    v1: HEADS=G: a program per KV head, grid B·HKV.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_T = 64
WARPS = 4


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
    ROWS: tl.constexpr,
    BLOCK_T: tl.constexpr,
):
    pid = tl.program_id(0)
    chunks: tl.constexpr = G // HEADS
    kvh = pid // chunks  # (sequence, KV head), flattened
    h0 = kvh * G + (pid % chunks) * HEADS  # the first query head (flattened over sequences)
    rr = tl.arange(0, ROWS)
    real = rr < HEADS
    d = tl.arange(0, D)
    tt = tl.arange(0, BLOCK_T)
    qo = (h0 + rr)[:, None].to(tl.int64) * D + d[None, :]
    q = tl.load(q_ptr + qo, mask=real[:, None], other=0.0)  # [ROWS, D], the padding rows zero
    base = kvh.to(tl.int64) * S * D
    m = tl.full((ROWS,), float("-inf"), tl.float32)
    denom = tl.zeros((ROWS,), tl.float32)
    acc = tl.zeros((ROWS, D), tl.float32)
    for start in range(0, S, BLOCK_T):
        t = start + tt
        offs = base + t[:, None].to(tl.int64) * D + d[None, :]
        k = tl.load(k_ptr + offs, mask=t[:, None] < S, other=0.0)  # [T, D]
        s = tl.dot(q, tl.trans(k)) * scale  # [ROWS, T], fp32
        s = tl.where(t[None, :] < S, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        pr = tl.exp(s - m_new[:, None])
        v = tl.load(v_ptr + offs, mask=t[:, None] < S, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(pr.to(v.dtype), v)
        denom = denom * alpha + tl.sum(pr, axis=1)
        m = m_new
    tl.store(out_ptr + qo, (acc / denom[:, None]).to(out_ptr.dtype.element_ty), mask=real[:, None])


def _build(inputs, p, heads):
    q, k, v, out = inputs["q"], inputs["k"], inputs["v"], inputs["out"]
    b, hkv, s, d = k.shape
    grp = q.shape[1] // hkv
    heads = grp if heads is None else heads
    rows = max(16, heads)
    programs = b * hkv * (grp // heads)
    scale = 1.0 / d**0.5
    tiling = {
        "BLOCK_T": BLOCK_T,
        "D": d,
        "G": grp,
        "HEADS": heads,
        "ROWS": rows,
        "num_warps": WARPS,
        "grid": [programs],
    }

    def run():
        return gqa_decode_kernel[(programs,)](
            q, k, v, out, s, scale, G=grp, D=d, HEADS=heads, ROWS=rows, BLOCK_T=BLOCK_T, num_warps=WARPS
        )

    return Plan(
        [Stage("decode_attention", run, kernel=gqa_decode_kernel, tiling=tiling, grid_blocks=programs)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, 1)


def build_v1(inputs, p):
    return _build(inputs, p, None)
