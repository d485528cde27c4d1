"""Triton code of calib_topp_scan (imported only by the profiling worker).

Both kernels: one program a row (4 warps), blocks of BLOCK = 2048 probabilities; a block step: x = the block
(masked past V), c = carry + (cumsum(x) - x) (the exclusive prefix, monotone in the row), count += sum(c < p
over the valid entries), carry += sum(x).
full_scan_kernel (v0): a ``for`` loop over every block of the row.
early_exit_kernel (v1): a ``while carry < p and start < V`` loop: the same steps, stopping after the block in
which the mass reaches p (the later blocks could only add entries whose prefix is >= p).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 2048, 4


@triton.jit
def full_scan_kernel(x_ptr, o_ptr, V, P, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row.to(tl.int64) * V
    carry = tl.zeros([], dtype=tl.float32)
    count = tl.zeros([], dtype=tl.int32)
    for start in range(0, V, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < V
        x = tl.load(base + offs, mask=m, other=0.0)
        c = carry + (tl.cumsum(x, axis=0) - x)
        count += tl.sum(((c < P) & m).to(tl.int32), axis=0)
        carry += tl.sum(x, axis=0)
    tl.store(o_ptr + row, count)


@triton.jit
def early_exit_kernel(x_ptr, o_ptr, V, P, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row.to(tl.int64) * V
    carry = tl.zeros([], dtype=tl.float32)
    count = tl.zeros([], dtype=tl.int32)
    start = 0
    while (carry < P) & (start < V):
        offs = start + tl.arange(0, BLOCK)
        m = offs < V
        x = tl.load(base + offs, mask=m, other=0.0)
        c = carry + (tl.cumsum(x, axis=0) - x)
        count += tl.sum(((c < P) & m).to(tl.int32), axis=0)
        carry += tl.sum(x, axis=0)
        start += BLOCK
    tl.store(o_ptr + row, count)


def _build(inputs, params, name, kernel):
    from . import P_TOP

    x, out = inputs["probs"], inputs["out"]
    r, v = params["R"], params["V"]

    def run():
        return kernel[(r,)](x, out, v, P_TOP, BLOCK=BLOCK, num_warps=WARPS)

    st = Stage(name, run, kernel=kernel, tiling={"BLOCK": BLOCK, "grid": [r]}, grid_blocks=r)
    return Plan([st], output=lambda: out)


def build_v0(inputs, params):
    return _build(inputs, params, "topp_full_scan", full_scan_kernel)


def build_v1(inputs, params):
    return _build(inputs, params, "topp_early_exit", early_exit_kernel)
