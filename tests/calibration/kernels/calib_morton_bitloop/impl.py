"""Triton code of calib_morton_bitloop (imported only by the profiling worker).

One point a lane, BLOCK points a program: the two fp16 coordinates loaded (row 0 x, row 1 y), quantised to 16
bits (q = min(floor(p * 65536), 65535)), interleaved into a 32-bit code stored as int32.
bitloop_kernel (v0): bit b of qx to bit 2b, bit b of qy to bit 2b + 1, one bit at a time (16 unrolled steps).
magic_kernel (v1): each coordinate's bits spread by four shift-or-mask steps (Part1By1), then or-ed.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 1024, 4


@triton.jit
def bitloop_kernel(p_ptr, o_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    px = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    py = tl.load(p_ptr + N + offs, mask=mask, other=0.0).to(tl.float32)
    qx = tl.minimum((px * 65536.0).to(tl.int32), 65535)
    qy = tl.minimum((py * 65536.0).to(tl.int32), 65535)
    code = tl.zeros([BLOCK], dtype=tl.int32)
    for b in tl.static_range(16):
        code = code | ((qx & (1 << b)) << b) | ((qy & (1 << b)) << (b + 1))
    tl.store(o_ptr + offs, code, mask=mask)


@triton.jit
def _part1by1(v):
    v = (v | (v << 8)) & 0x00FF00FF
    v = (v | (v << 4)) & 0x0F0F0F0F
    v = (v | (v << 2)) & 0x33333333
    v = (v | (v << 1)) & 0x55555555
    return v


@triton.jit
def magic_kernel(p_ptr, o_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    px = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    py = tl.load(p_ptr + N + offs, mask=mask, other=0.0).to(tl.float32)
    qx = tl.minimum((px * 65536.0).to(tl.int32), 65535)
    qy = tl.minimum((py * 65536.0).to(tl.int32), 65535)
    code = _part1by1(qx) | (_part1by1(qy) << 1)
    tl.store(o_ptr + offs, code, mask=mask)


def _build(name, kernel, inputs, params):
    pts, out = inputs["P"], inputs["out"]
    n = params["N"]
    grid = (triton.cdiv(n, BLOCK),)

    def run():
        return kernel[grid](pts, out, n, BLOCK=BLOCK, num_warps=WARPS)

    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": list(grid)}
    return Plan([Stage(name, run, kernel=kernel, tiling=tiling, grid_blocks=grid[0])], output=lambda: out)


def build_v0(inputs, params):
    return _build("morton_bitloop", bitloop_kernel, inputs, params)


def build_v1(inputs, params):
    return _build("morton_magic", magic_kernel, inputs, params)
