"""Triton code of calib_alibi_bias (imported only by the profiling worker).

One flash-attention forward for both versions, a program of 4 warps per BLOCK_M queries of one (batch, head),
keys in blocks of BLOCK_N, online softmax in fp32 (exp2, log2(e) folded into the scale and the bias); EVEN (S a multiple of both blocks)
drops the masks; the bias chosen by a constexpr:

    v0: BIAS_TENSOR=True: bias[b, h, rows, cols] loaded (fp32) for every score tile;
    v1: BIAS_TENSOR=False: -slope_h * |cols - rows| computed in registers (float positions, one FFMA a score).
"""

import math

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_M, BLOCK_N, WARPS, STAGES = 128, 64, 4, 3


@triton.jit
def alibi_attention_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    bias_ptr,
    slopes_ptr,
    o_ptr,
    H,
    S,
    scale,
    D: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BIAS_TENSOR: tl.constexpr,
    EVEN: tl.constexpr,
):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    h = bh % H
    base = bh.to(tl.int64) * S * D
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, D)
    if EVEN:
        q = tl.load(q_ptr + base + rows[:, None] * D + dims[None, :])
    else:
        q = tl.load(q_ptr + base + rows[:, None] * D + dims[None, :], mask=rows[:, None] < S, other=0.0)
    slope2 = -tl.load(slopes_ptr + h) * 1.4426950408889634  # the bias in the exp2 domain
    rows_f = rows.to(tl.float32)
    bias_rows = bias_ptr + bh.to(tl.int64) * S * S + rows[:, None].to(tl.int64) * S
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    qk_scale = scale * 1.4426950408889634
    for start in range(0, S, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        if EVEN:
            k = tl.load(k_ptr + base + cols[:, None] * D + dims[None, :])
        else:
            k = tl.load(k_ptr + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < S, other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        if BIAS_TENSOR:
            if EVEN:
                bias = tl.load(bias_rows + cols[None, :])
            else:
                bias = tl.load(
                    bias_rows + cols[None, :], mask=(rows[:, None] < S) & (cols[None, :] < S), other=0.0
                )
            s = s + bias * 1.4426950408889634
        else:
            dist = tl.abs(cols.to(tl.float32)[None, :] - rows_f[:, None])
            s = s + dist * slope2
        if not EVEN:
            s = tl.where(cols[None, :] < S, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        pr = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(pr, 1)
        if EVEN:
            v = tl.load(v_ptr + base + cols[:, None] * D + dims[None, :])
        else:
            v = tl.load(v_ptr + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < S, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(pr.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    o_ptrs = o_ptr + base + rows[:, None] * D + dims[None, :]
    if EVEN:
        tl.store(o_ptrs, out.to(o_ptr.dtype.element_ty))
    else:
        tl.store(o_ptrs, out.to(o_ptr.dtype.element_ty), mask=rows[:, None] < S)


def _build(inputs, p, bias_tensor):
    q, k, v, bias, sl, out = (inputs[n] for n in ("q", "k", "v", "bias", "slopes", "out"))
    b, h, s, d = q.shape
    grid = (triton.cdiv(s, BLOCK_M), b * h)
    tiling = {
        "BLOCK_M": BLOCK_M,
        "BLOCK_N": BLOCK_N,
        "BIAS_TENSOR": bias_tensor,
        "num_warps": WARPS,
        "num_stages": STAGES,
        "EVEN": s % BLOCK_M == 0 and s % BLOCK_N == 0,
        "grid": list(grid),
    }
    scale = 1.0 / math.sqrt(d)
    even = s % BLOCK_M == 0 and s % BLOCK_N == 0

    def run():
        return alibi_attention_kernel[grid](
            q,
            k,
            v,
            bias,
            sl,
            out,
            h,
            s,
            scale,
            D=d,
            BLOCK_M=BLOCK_M,
            BLOCK_N=BLOCK_N,
            BIAS_TENSOR=bias_tensor,
            EVEN=even,
            num_warps=WARPS,
            num_stages=STAGES,
        )

    return Plan(
        [
            Stage(
                "attention", run, kernel=alibi_attention_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1]
            )
        ],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, True)


def build_v1(inputs, p):
    return _build(inputs, p, False)
