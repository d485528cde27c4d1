"""Triton code of calib_jacobi_copy (imported only by the profiling worker).

sweep_kernel: grid (N, cdiv(N, 1024)), 4 warps: dst[i, j] = (src[i-1, j] + src[i+1, j] + src[i, j-1] +
    src[i, j+1]) / 4 on the interior, dst[i, j] = src[i, j] on the boundary (fp32 math);
copy_kernel: the same grid: dst[i, j] = src[i, j].

v0: sweep(u0 → b), copy(b → a), sweep(a → b), copy(b → a), ... (the result in a);
v1: sweep(u0 → a), sweep(a → b), sweep(b → a), ... (the result in a after an odd count of sweeps, else b).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 1024, 4


@triton.jit
def sweep_kernel(src_ptr, dst_ptr, N, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = cols < N
    row = src_ptr + i.to(tl.int64) * N
    c = tl.load(row + cols, mask=m, other=0.0)
    ii = cols * 0 + i  # the row index as a vector (the interpreter takes no scalar-and-vector masks)
    interior = (ii > 0) & (ii < N - 1) & (cols > 0) & (cols < N - 1)
    up = tl.load(row - N + cols, mask=m & interior, other=0.0).to(tl.float32)
    down = tl.load(row + N + cols, mask=m & interior, other=0.0).to(tl.float32)
    left = tl.load(row + cols - 1, mask=m & interior, other=0.0).to(tl.float32)
    right = tl.load(row + cols + 1, mask=m & interior, other=0.0).to(tl.float32)
    new = 0.25 * (up + down + left + right)
    y = tl.where(interior, new, c.to(tl.float32))
    tl.store(dst_ptr + i.to(tl.int64) * N + cols, y.to(dst_ptr.dtype.element_ty), mask=m)


@triton.jit
def copy_kernel(src_ptr, dst_ptr, N, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = cols < N
    tl.store(dst_ptr + i * N + cols, tl.load(src_ptr + i * N + cols, mask=m), mask=m)


def _grid(n):
    return (n, triton.cdiv(n, BLOCK))


def _stage(name, kernel, src, dst, n):
    grid = _grid(n)

    def run():
        return kernel[grid](src, dst, n, BLOCK=BLOCK, num_warps=WARPS)

    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "grid": list(grid)}
    return Stage(name, run, kernel=kernel, tiling=tiling, grid_blocks=grid[0] * grid[1])


def build_v0(inputs, params):
    u0, a, b, n = inputs["u0"], inputs["a"], inputs["b"], params["N"]
    stages = []
    for s in range(params["S"]):
        stages.append(_stage(f"sweep{s}", sweep_kernel, u0 if s == 0 else a, b, n))
        stages.append(_stage(f"copy{s}", copy_kernel, b, a, n))
    return Plan(stages, output=lambda: a)


def build_v1(inputs, params):
    u0, bufs, n = inputs["u0"], (inputs["a"], inputs["b"]), params["N"]
    stages = [_stage("sweep0", sweep_kernel, u0, bufs[0], n)]
    for s in range(1, params["S"]):
        stages.append(_stage(f"sweep{s}", sweep_kernel, bufs[(s - 1) % 2], bufs[s % 2], n))
    last = bufs[(params["S"] - 1) % 2]
    return Plan(stages, output=lambda: last)
