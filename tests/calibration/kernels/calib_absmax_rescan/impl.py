"""Triton code of calib_absmax_rescan (imported only by the profiling worker).

Every program owns BLOCK = 8192 elements (8 warps); the quantisation of a block: y = scale * clamp(floor(x * inv +
0.5), -127, 127) with inv = 127 / amax, scale = amax / 127.
rescan_kernel (v0): each program first loops over the whole tensor in chunks of SCAN = 4096 (a running vector
maximum of |x|, reduced at the end), then quantises its own block.
partial_kernel + apply_kernel (v1): each program writes the maximum of |x| over its own block; then each program
of the second kernel loads the NP partials (NP_P2 = the next power of two, masked), takes their maximum and
quantises its block.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, SCAN, WARPS = 8192, 4096, 8


@triton.jit
def rescan_kernel(x_ptr, o_ptr, N, BLOCK: tl.constexpr, SCAN: tl.constexpr):
    pid = tl.program_id(0)
    m = tl.zeros([SCAN], dtype=tl.float32)
    for start in range(0, N, SCAN):
        offs = start + tl.arange(0, SCAN)
        v = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
        m = tl.maximum(m, tl.abs(v))
    amax = tl.max(m, axis=0)
    inv = 127.0 / amax
    scale = amax / 127.0
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    q = tl.minimum(tl.maximum(tl.floor(x * inv + 0.5), -127.0), 127.0)
    tl.store(o_ptr + offs, q * scale, mask=mask)


@triton.jit
def partial_kernel(x_ptr, p_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(p_ptr + pid, tl.max(tl.abs(x), axis=0))


@triton.jit
def apply_kernel(x_ptr, p_ptr, o_ptr, N, NP, BLOCK: tl.constexpr, NP_P2: tl.constexpr):
    pid = tl.program_id(0)
    po = tl.arange(0, NP_P2)
    amax = tl.max(tl.load(p_ptr + po, mask=po < NP, other=0.0), axis=0)
    inv = 127.0 / amax
    scale = amax / 127.0
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    q = tl.minimum(tl.maximum(tl.floor(x * inv + 0.5), -127.0), 127.0)
    tl.store(o_ptr + offs, q * scale, mask=mask)


def build_v0(inputs, params):
    x, out = inputs["x"], inputs["out"]
    n = params["N"]
    g = triton.cdiv(n, BLOCK)

    def run():
        return rescan_kernel[(g,)](x, out, n, BLOCK=BLOCK, SCAN=SCAN, num_warps=WARPS)

    st = Stage(
        "fakequant_rescan",
        run,
        kernel=rescan_kernel,
        tiling={"BLOCK": BLOCK, "SCAN": SCAN, "num_warps": WARPS, "grid": [g]},
        grid_blocks=g,
    )
    return Plan([st], output=lambda: out)


def build_v1(inputs, params):
    import torch

    x, out = inputs["x"], inputs["out"]
    n = params["N"]
    g = triton.cdiv(n, BLOCK)
    partials = torch.empty(g, device=x.device, dtype=torch.float32)
    np2 = max(triton.next_power_of_2(g), 2)

    def partial():
        return partial_kernel[(g,)](x, partials, n, BLOCK=BLOCK, num_warps=WARPS)

    def apply():
        return apply_kernel[(g,)](x, partials, out, n, g, BLOCK=BLOCK, NP_P2=np2, num_warps=WARPS)

    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": [g]}
    return Plan(
        [
            Stage("absmax_partial", partial, kernel=partial_kernel, tiling=tiling, grid_blocks=g),
            Stage("fakequant_apply", apply, kernel=apply_kernel, tiling=tiling, grid_blocks=g),
        ],
        output=lambda: out,
    )
