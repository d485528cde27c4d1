"""Triton code of mla_decode (imported only by the profiling worker)."""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import num_splits, rows, split_len, v2_launch

LOG2E = 1.4426950408889634


@triton.jit
def attend_rowwise_kernel(Q, KV, MID_O, MID_LSE, qk_scale, T, SPLIT_LEN,
                          stride_qb, stride_qr, stride_kvb, stride_kvt,
                          stride_mob, stride_mor, stride_mos, stride_mlb, stride_mlr,
                          D: tl.constexpr, P: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_P: tl.constexpr,
                          BLOCK_N: tl.constexpr):
    """v0: one query row per program; dot products on CUDA cores."""
    pid_b = tl.program_id(0)
    row = tl.program_id(1)
    split = tl.program_id(2)
    offs_d = tl.arange(0, BLOCK_D)
    offs_p = tl.arange(0, BLOCK_P)
    q_row = Q + pid_b * stride_qb + row * stride_qr
    q_nope = tl.load(q_row + offs_d, mask=offs_d < D, other=0.0).to(tl.float32)
    q_pe = tl.load(q_row + D + offs_p, mask=offs_p < P, other=0.0).to(tl.float32)
    start = split * SPLIT_LEN
    end = tl.minimum(start + SPLIT_LEN, T)
    m_i = float("-inf")
    l_i = 0.0
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    kv_b = KV + pid_b * stride_kvb
    for n0 in range(start, end, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        n_ok = offs_n < end
        kv = tl.load(kv_b + offs_n[:, None] * stride_kvt + offs_d[None, :],
                     mask=n_ok[:, None] & (offs_d[None, :] < D), other=0.0).to(tl.float32)
        kpe = tl.load(kv_b + offs_n[:, None] * stride_kvt + D + offs_p[None, :],
                      mask=n_ok[:, None] & (offs_p[None, :] < P), other=0.0).to(tl.float32)
        qk = (tl.sum(kv * q_nope[None, :], 1) + tl.sum(kpe * q_pe[None, :], 1)) * qk_scale
        qk = tl.where(n_ok, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 0))
        alpha = tl.exp2(m_i - m_new)
        pr = tl.exp2(qk - m_new)
        l_i = l_i * alpha + tl.sum(pr, 0)
        acc = acc * alpha + tl.sum(pr[:, None] * kv, 0)
        m_i = m_new
    mo = MID_O + pid_b * stride_mob + row * stride_mor + split * stride_mos
    tl.store(mo + offs_d, acc / l_i, mask=offs_d < D)
    tl.store(MID_LSE + pid_b * stride_mlb + row * stride_mlr + split, m_i + tl.log2(l_i))


@triton.jit
def attend_grouped_kernel(Q, KV, MID_O, MID_LSE, qk_scale, ROWS, T, SPLIT_LEN,
                          stride_qb, stride_qr, stride_kvb, stride_kvt,
                          stride_mob, stride_mor, stride_mos, stride_mlb, stride_mlr,
                          D: tl.constexpr, P: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_P: tl.constexpr,
                          BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr, ROWS_FASTEST: tl.constexpr = False):
    """v1+: BLOCK_H query rows per program; one latent KV tile serves as key (d+p) and value (d).

    ROWS_FASTEST: grid (row blocks, b, splits) instead of (b, row blocks, splits): the programs
    launched together then share one batch's KV cache, which stays in L2."""
    if ROWS_FASTEST:
        pid_h = tl.program_id(0)
        pid_b = tl.program_id(1)
    else:
        pid_b = tl.program_id(0)
        pid_h = tl.program_id(1)
    split = tl.program_id(2)
    offs_h = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    h_ok = offs_h < ROWS
    offs_d = tl.arange(0, BLOCK_D)
    offs_p = tl.arange(0, BLOCK_P)
    q_rows = Q + pid_b * stride_qb + offs_h[:, None] * stride_qr
    q_nope = tl.load(q_rows + offs_d[None, :], mask=h_ok[:, None] & (offs_d[None, :] < D), other=0.0)
    q_pe = tl.load(q_rows + D + offs_p[None, :], mask=h_ok[:, None] & (offs_p[None, :] < P), other=0.0)
    start = split * SPLIT_LEN
    end = tl.minimum(start + SPLIT_LEN, T)
    m_i = tl.full([BLOCK_H], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_D], dtype=tl.float32)
    kv_b = KV + pid_b * stride_kvb
    for n0 in range(start, end, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        n_ok = offs_n < end
        kv = tl.load(kv_b + offs_n[:, None] * stride_kvt + offs_d[None, :],
                     mask=n_ok[:, None] & (offs_d[None, :] < D), other=0.0)
        kpe = tl.load(kv_b + offs_n[:, None] * stride_kvt + D + offs_p[None, :],
                      mask=n_ok[:, None] & (offs_p[None, :] < P), other=0.0)
        qk = tl.dot(q_pe, tl.trans(kpe))
        qk = tl.dot(q_nope, tl.trans(kv), qk)
        qk = tl.where(n_ok[None, :], qk * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.exp2(m_i - m_new)
        pr = tl.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(pr, 1)
        acc = acc * alpha[:, None]
        acc = tl.dot(pr.to(kv.dtype), kv, acc)
        m_i = m_new
    mo = MID_O + pid_b * stride_mob + offs_h[:, None] * stride_mor + split * stride_mos
    tl.store(mo + offs_d[None, :], acc / l_i[:, None], mask=h_ok[:, None] & (offs_d[None, :] < D))
    tl.store(MID_LSE + pid_b * stride_mlb + offs_h * stride_mlr + split, m_i + tl.log2(l_i), mask=h_ok)


@triton.jit
def combine_kernel(MID_O, MID_LSE, O, NUM_SPLITS,
                   stride_mob, stride_mor, stride_mos, stride_mlb, stride_mlr, stride_ob, stride_or,
                   D: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_S: tl.constexpr):
    """Merge the split partials of one (batch, row): weights exp2(lse_i − max lse)."""
    pid_b = tl.program_id(0)
    row = tl.program_id(1)
    offs_s = tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, BLOCK_D)
    s_ok = offs_s < NUM_SPLITS
    lse = tl.load(MID_LSE + pid_b * stride_mlb + row * stride_mlr + offs_s, mask=s_ok, other=float("-inf"))
    w = tl.exp2(lse - tl.max(lse, 0))
    w = w / tl.sum(w, 0)
    parts = tl.load(MID_O + pid_b * stride_mob + row * stride_mor + offs_s[:, None] * stride_mos + offs_d[None, :],
                    mask=s_ok[:, None] & (offs_d[None, :] < D), other=0.0)
    out = tl.sum(parts * w[:, None], 0)
    tl.store(O + pid_b * stride_ob + row * stride_or + offs_d, out.to(O.dtype.element_ty), mask=offs_d < D)


class _Buffers:
    """Views with flattened rows plus the float32 partials of one version."""

    def __init__(self, inputs, params, splits):
        import torch

        b, d, p = params["b"], params["d"], params["p"]
        R = rows(params)
        self.q = inputs["q"].view(b, R, d + p)
        self.kv = inputs["kv"]
        self.o = inputs["o"].view(b, R, d)
        dev = self.q.device
        self.mid_o = torch.empty(b, R, splits, d, device=dev, dtype=torch.float32)
        self.mid_lse = torch.empty(b, R, splits, device=dev, dtype=torch.float32)
        self.splits = splits
        self.split_len = split_len(params, splits)
        self.rows = R
        self.qk_scale = (d + p) ** -0.5 * LOG2E

    def attend_args(self):
        return (self.q.stride(0), self.q.stride(1), self.kv.stride(0), self.kv.stride(1),
                self.mid_o.stride(0), self.mid_o.stride(1), self.mid_o.stride(2),
                self.mid_lse.stride(0), self.mid_lse.stride(1))


def _combine_stage(buf, params):
    d = params["d"]
    tiling = {"BLOCK_D": triton.next_power_of_2(d), "BLOCK_S": max(2, triton.next_power_of_2(buf.splits)),
              "num_warps": 4, "splits": buf.splits}
    grid = (params["b"], buf.rows)

    def run():
        return combine_kernel[grid](
            buf.mid_o, buf.mid_lse, buf.o, buf.splits,
            buf.mid_o.stride(0), buf.mid_o.stride(1), buf.mid_o.stride(2), buf.mid_lse.stride(0),
            buf.mid_lse.stride(1), buf.o.stride(0), buf.o.stride(1),
            D=d, BLOCK_D=tiling["BLOCK_D"], BLOCK_S=tiling["BLOCK_S"], num_warps=4)

    return Stage("combine", run, kernel=combine_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])


def build_v0(inputs, params):
    buf = _Buffers(inputs, params, num_splits(params, 1))
    d, p = params["d"], params["p"]
    t = {"BLOCK_N": 16, "BLOCK_D": triton.next_power_of_2(d), "BLOCK_P": triton.next_power_of_2(p),
         "num_warps": 4, "num_stages": 1, "splits": buf.splits, "split_len": buf.split_len}
    grid = (params["b"], buf.rows, buf.splits)

    def run():
        return attend_rowwise_kernel[grid](
            buf.q, buf.kv, buf.mid_o, buf.mid_lse, buf.qk_scale, params["t"], buf.split_len, *buf.attend_args(),
            D=d, P=p, BLOCK_D=t["BLOCK_D"], BLOCK_P=t["BLOCK_P"], BLOCK_N=t["BLOCK_N"],
            num_warps=t["num_warps"], num_stages=t["num_stages"])

    stages = [Stage("attend", run, kernel=attend_rowwise_kernel, tiling=t, grid_blocks=grid[0] * grid[1] * grid[2]),
              _combine_stage(buf, params)]
    return Plan(stages=stages, output=lambda: inputs["o"])


def _build_grouped(inputs, params, launch):
    buf = _Buffers(inputs, params, num_splits(params, launch["BLOCK_H"], launch["target"], launch.get("one_wave", False)))
    d, p, bh = params["d"], params["p"], launch["BLOCK_H"]
    t = {"BLOCK_H": bh, "BLOCK_N": launch["BLOCK_N"], "BLOCK_D": triton.next_power_of_2(d),
         "BLOCK_P": triton.next_power_of_2(p), "num_warps": launch["num_warps"], "num_stages": launch["num_stages"],
         "splits": buf.splits, "split_len": buf.split_len}
    rows_fastest = launch.get("rows_fastest", False)
    t["grid_order"] = "(row blocks, b, splits)" if rows_fastest else "(b, row blocks, splits)"
    grid = ((triton.cdiv(buf.rows, bh), params["b"], buf.splits) if rows_fastest
            else (params["b"], triton.cdiv(buf.rows, bh), buf.splits))

    def run():
        return attend_grouped_kernel[grid](
            buf.q, buf.kv, buf.mid_o, buf.mid_lse, buf.qk_scale, buf.rows, params["t"], buf.split_len,
            *buf.attend_args(), D=d, P=p, BLOCK_D=t["BLOCK_D"], BLOCK_P=t["BLOCK_P"], BLOCK_H=bh,
            BLOCK_N=t["BLOCK_N"], ROWS_FASTEST=rows_fastest, num_warps=t["num_warps"], num_stages=t["num_stages"])

    stages = [Stage("attend", run, kernel=attend_grouped_kernel, tiling=t, grid_blocks=grid[0] * grid[1] * grid[2]),
              _combine_stage(buf, params)]
    return Plan(stages=stages, output=lambda: inputs["o"])


def build_v1(inputs, params):
    from . import TARGET_PROGRAMS

    return _build_grouped(inputs, params, {"BLOCK_H": 16, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2,
                                           "target": TARGET_PROGRAMS})


def build_v2(inputs, params):
    return _build_grouped(inputs, params, v2_launch(params))


def build_v3(inputs, params):
    return _build_grouped(inputs, params, {**v2_launch(params), "rows_fastest": True})


BUILDERS = {"v0": build_v0, "v1": build_v1, "v2": build_v2, "v3": build_v3}
