"""Triton code of calib_moe_dense (imported only by the profiling worker).

moe_kernel: one program per 128x128 tile of out (T x F), in grouped order (GROUP_M tile rows at a time, as
Triton's matmul tutorial orders them); for each expert e in [e_lo, e_hi] a K loop of tl.dot (x tile ·
W[e] tile, fp32 accumulation) whose result is kept in the tile rows with ids == e; out = gate · acc (fp16).
v0: e_lo = 0, e_hi = E - 1 (every expert: DENSE = True);
v1: e_lo = ids[first row of the tile], e_hi = ids[last row of the tile] (ids sorted: one expert for a tile
    inside an expert's group).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

TILING = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}


@triton.jit
def moe_kernel(
    x_ptr,
    w_ptr,
    ids_ptr,
    gate_ptr,
    out_ptr,
    T,
    D,
    F,
    E,
    DENSE: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_m = tl.cdiv(T, BLOCK_M)
    num_n = tl.cdiv(F, BLOCK_N)
    in_group = GROUP_M * num_n
    first_m = (pid // in_group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % in_group) % size_m)
    pid_n = (pid % in_group) // size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_ok = offs_m < T
    n_ok = offs_n < F
    ids = tl.load(ids_ptr + offs_m, mask=m_ok, other=-1)
    if DENSE:
        e_lo = 0
        e_hi = E - 1
    else:
        e_lo = tl.load(ids_ptr + pid_m * BLOCK_M)
        e_hi = tl.load(ids_ptr + min(pid_m * BLOCK_M + BLOCK_M, T) - 1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for e in range(e_lo, e_hi + 1):
        a_ptrs = x_ptr + (offs_m[:, None].to(tl.int64) * D + offs_k[None, :])
        b_ptrs = w_ptr + e * D * F + (offs_k[:, None].to(tl.int64) * F + offs_n[None, :])
        part = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(D, BLOCK_K)):
            k_left = D - k * BLOCK_K
            a = tl.load(a_ptrs, mask=m_ok[:, None] & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & n_ok[None, :], other=0.0)
            part = tl.dot(a, b, part)
            a_ptrs += BLOCK_K
            b_ptrs += BLOCK_K * F
        acc = tl.where((ids == e)[:, None], part, acc)
    gate = tl.load(gate_ptr + offs_m, mask=m_ok, other=0.0)
    y = acc * gate[:, None]
    c_ptrs = out_ptr + offs_m[:, None].to(tl.int64) * F + offs_n[None, :]
    tl.store(c_ptrs, y.to(out_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def _stage(name, inputs, params, dense):
    t = TILING
    T, D, F, E = params["T"], params["D"], params["F"], params["E"]
    programs = triton.cdiv(T, t["BLOCK_M"]) * triton.cdiv(F, t["BLOCK_N"])
    x, w, ids, gate, out = (inputs[k] for k in ("x", "w", "ids", "gate", "out"))

    def run():
        return moe_kernel[(programs,)](
            x,
            w,
            ids,
            gate,
            out,
            T,
            D,
            F,
            E,
            DENSE=dense,
            BLOCK_M=t["BLOCK_M"],
            BLOCK_N=t["BLOCK_N"],
            BLOCK_K=t["BLOCK_K"],
            GROUP_M=t["GROUP_M"],
            num_warps=t["num_warps"],
            num_stages=t["num_stages"],
        )

    return Stage(
        name, run, kernel=moe_kernel, tiling=dict(t, grid=[programs], dense=dense), grid_blocks=programs
    )


def build_v0(inputs, params):
    return Plan([_stage("dense_experts", inputs, params, True)], output=lambda: inputs["out"])


def build_v1(inputs, params):
    return Plan([_stage("grouped_experts", inputs, params, False)], output=lambda: inputs["out"])
