"""Triton code of calib_hmm_logspace (imported only by the profiling worker).

Both kernels: one program a block of BLOCK = 32 sequences (4 warps), the forward variables a [BLOCK, S] tile,
each step a [BLOCK, S, S] tile of transition terms (predecessor i on axis 1, state j on axis 2) summed over i;
the observation of each sequence at step t read from the time-major obs [T, NS] (coalesced), its emission row
gathered from the [V, S] table.
forward_log_kernel (v0): the log domain: m = max_i alpha_i; alpha'_j = m + log(sum_i exp(alpha_i - m +
log A_ij)) + log B[o_t, j]; at the end ll = logsumexp_j alpha_j.
forward_scaled_kernel (v1): Rabiner's scaling: alpha'_j = (sum_i alpha_i A_ij) B[o_t, j]; c = sum_j alpha'_j;
alpha' = alpha' / c; ll += log c.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 32, 4


@triton.jit
def forward_log_kernel(o_ptr, pi_ptr, a_ptr, b_ptr, out_ptr, NS, T, S: tl.constexpr, BLOCK: tl.constexpr):
    seq = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    msk = seq < NS
    s = tl.arange(0, S)
    la = tl.load(a_ptr + s[:, None] * S + s[None, :])  # log A [i, j]
    o = tl.load(o_ptr + seq, mask=msk, other=0)
    alpha = tl.load(pi_ptr + s)[None, :] + tl.load(b_ptr + o[:, None] * S + s[None, :])
    for t in range(1, T):
        o = tl.load(o_ptr + t * NS + seq, mask=msk, other=0)
        m = tl.max(alpha, axis=1)
        e = tl.exp((alpha - m[:, None])[:, :, None] + la[None, :, :])  # [BLOCK, S, S]
        alpha = m[:, None] + tl.log(tl.sum(e, axis=1)) + tl.load(b_ptr + o[:, None] * S + s[None, :])
    m = tl.max(alpha, axis=1)
    ll = m + tl.log(tl.sum(tl.exp(alpha - m[:, None]), axis=1))
    tl.store(out_ptr + seq, ll, mask=msk)


@triton.jit
def forward_scaled_kernel(o_ptr, pi_ptr, a_ptr, b_ptr, out_ptr, NS, T, S: tl.constexpr, BLOCK: tl.constexpr):
    seq = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    msk = seq < NS
    s = tl.arange(0, S)
    pa = tl.load(a_ptr + s[:, None] * S + s[None, :])  # A [i, j]
    o = tl.load(o_ptr + seq, mask=msk, other=0)
    alpha = tl.load(pi_ptr + s)[None, :] * tl.load(b_ptr + o[:, None] * S + s[None, :])
    c = tl.sum(alpha, axis=1)
    ll = tl.log(c)
    alpha = alpha * (1.0 / c)[:, None]
    for t in range(1, T):
        o = tl.load(o_ptr + t * NS + seq, mask=msk, other=0)
        alpha = tl.sum(alpha[:, :, None] * pa[None, :, :], axis=1) * tl.load(
            b_ptr + o[:, None] * S + s[None, :]
        )
        c = tl.sum(alpha, axis=1)
        ll += tl.log(c)
        alpha = alpha * (1.0 / c)[:, None]
    tl.store(out_ptr + seq, ll, mask=msk)


def _build(inputs, params, name, kernel, prefix):
    from . import S

    obs, out = inputs["obs"], inputs["out"]
    pi, a, b = (inputs[prefix + k] for k in ("pi", "A", "B"))
    ns, t = params["NS"], params["T"]
    grid = triton.cdiv(ns, BLOCK)

    def run():
        return kernel[(grid,)](obs, pi, a, b, out, ns, t, S=S, BLOCK=BLOCK, num_warps=WARPS)

    st = Stage(
        name, run, kernel=kernel, tiling={"BLOCK": BLOCK, "S": S, "T": t, "grid": [grid]}, grid_blocks=grid
    )
    return Plan([st], output=lambda: out)


def build_v0(inputs, params):
    return _build(inputs, params, "hmm_forward_log", forward_log_kernel, "log_")


def build_v1(inputs, params):
    return _build(inputs, params, "hmm_forward_scaled", forward_scaled_kernel, "")
