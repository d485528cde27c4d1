"""Triton code of calib_chunk_copies (imported only by the profiling worker).

copy_kernel: grid (N, cdiv(F, 1024)), 4 warps: dst[i, j] = src[i * src_stride + j] (what ``.contiguous()``
    launches for a row-strided view);
swiglu_kernel: grid (N, cdiv(F, 1024)), 4 warps: out[i, j] = silu(g[i, j]) · u[i, j], g and u read
    through their row stride, computed in fp32.

v0: copy_kernel (gate → gbuf), copy_kernel (up → ubuf), swiglu_kernel(gbuf, ubuf, stride F);
v1: swiglu_kernel(h, h + F, stride 2F).
"""

import torch
import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 1024, 4


@triton.jit
def copy_kernel(src_ptr, dst_ptr, F, src_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = cols < F
    x = tl.load(src_ptr + row * src_stride + cols, mask=m)
    tl.store(dst_ptr + row * F + cols, x, mask=m)


@triton.jit
def swiglu_kernel(g_ptr, u_ptr, out_ptr, F, in_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = cols < F
    g = tl.load(g_ptr + row * in_stride + cols, mask=m).to(tl.float32)
    u = tl.load(u_ptr + row * in_stride + cols, mask=m).to(tl.float32)
    y = g * tl.sigmoid(g) * u
    tl.store(out_ptr + row * F + cols, y.to(out_ptr.dtype.element_ty), mask=m)


def _grid(params):
    return (params["N"], triton.cdiv(params["F"], BLOCK))


def _swiglu_stage(g, u, out, params, stride):
    grid = _grid(params)

    def run():
        return swiglu_kernel[grid](g, u, out, params["F"], stride, BLOCK=BLOCK, num_warps=WARPS)

    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": list(grid), "in_stride": stride}
    return Stage("swiglu", run, kernel=swiglu_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])


def _copy_stage(name, src, dst, params):
    grid = _grid(params)
    f = params["F"]

    def run():
        return copy_kernel[grid](src, dst, f, 2 * f, BLOCK=BLOCK, num_warps=WARPS)

    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": list(grid)}
    return Stage(name, run, kernel=copy_kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])


def build_v0(inputs, params):
    h, out = inputs["h"], inputs["out"]
    n, f = params["N"], params["F"]
    gbuf = torch.empty((n, f), device=h.device, dtype=h.dtype)
    ubuf = torch.empty((n, f), device=h.device, dtype=h.dtype)
    stages = [
        _copy_stage("copy_gate", h, gbuf, params),
        _copy_stage("copy_up", h[:, f:], ubuf, params),
        _swiglu_stage(gbuf, ubuf, out, params, f),
    ]
    return Plan(stages, output=lambda: out)


def build_v1(inputs, params):
    h, out = inputs["h"], inputs["out"]
    f = params["F"]
    return Plan([_swiglu_stage(h, h[:, f:], out, params, 2 * f)], output=lambda: out)
