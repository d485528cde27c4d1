"""Triton code of calib_ln_broadcast_stats (imported only by the profiling worker).

stats_kernel: program r row r of X; the mean over N (one pass in chunks of BLOCK_N), then the variance of the
centred values (a second pass, as the Triton tutorial's layer norm), rstd = 1 / sqrt(var + eps); BCAST = True
(v0): mean and rstd stored broadcast over the row into fp32 [M, N] tensors, BCAST = False (v1): one fp32 each
into [M] tensors.
norm_kernel: program r row r; Y = (X - mean) * rstd * w + b in chunks of BLOCK_N, mean and rstd read as [M, N]
chunks (v0) or as the row's two scalars (v1).
"""

import torch
import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_N, WARPS = 1024, 4


@triton.jit
def stats_kernel(x_ptr, mean_ptr, rstd_ptr, N, eps, BCAST: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * N
    acc = tl.zeros((BLOCK_N,), tl.float32)
    for c in range(0, N, BLOCK_N):
        cols = c + tl.arange(0, BLOCK_N)
        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros((BLOCK_N,), tl.float32)
    for c in range(0, N, BLOCK_N):
        cols = c + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    if BCAST:
        for c in range(0, N, BLOCK_N):
            cols = c + tl.arange(0, BLOCK_N)
            ones = tl.full((BLOCK_N,), 1.0, tl.float32)
            tl.store(mean_ptr + row * N + cols, mean * ones, mask=cols < N)
            tl.store(rstd_ptr + row * N + cols, rstd * ones, mask=cols < N)
    else:
        tl.store(mean_ptr + row, mean)
        tl.store(rstd_ptr + row, rstd)


@triton.jit
def norm_kernel(
    x_ptr, mean_ptr, rstd_ptr, w_ptr, b_ptr, y_ptr, N, BCAST: tl.constexpr, BLOCK_N: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    if not BCAST:
        mean_s = tl.load(mean_ptr + row)
        rstd_s = tl.load(rstd_ptr + row)
    for c in range(0, N, BLOCK_N):
        cols = c + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        if BCAST:
            mean = tl.load(mean_ptr + row * N + cols, mask=mask, other=0.0)
            rstd = tl.load(rstd_ptr + row * N + cols, mask=mask, other=0.0)
        else:
            mean = mean_s
            rstd = rstd_s
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_ptr + row * N + cols, y.to(tl.float16), mask=mask)


def _build(bcast, names):
    def build(inputs, params):
        x, w, b, out = inputs["X"], inputs["W"], inputs["B"], inputs["out"]
        m, n = params["M"], params["N"]
        shape = (m, n) if bcast else (m,)
        mean = torch.empty(shape, device=x.device, dtype=torch.float32)
        rstd = torch.empty(shape, device=x.device, dtype=torch.float32)
        eps = 1e-5

        def stats():
            return stats_kernel[(m,)](x, mean, rstd, n, eps, BCAST=bcast, BLOCK_N=BLOCK_N, num_warps=WARPS)

        def norm():
            return norm_kernel[(m,)](
                x, mean, rstd, w, b, out, n, BCAST=bcast, BLOCK_N=BLOCK_N, num_warps=WARPS
            )

        tiling = {"BLOCK_N": BLOCK_N, "num_warps": WARPS, "grid": [m]}
        return Plan(
            [
                Stage(names[0], stats, kernel=stats_kernel, tiling=tiling, grid_blocks=m),
                Stage(names[1], norm, kernel=norm_kernel, tiling=tiling, grid_blocks=m),
            ],
            output=lambda: out,
        )

    return build


build_v0 = _build(True, ("ln_stats_bcast", "ln_norm_bcast"))
build_v1 = _build(False, ("ln_stats", "ln_norm"))
