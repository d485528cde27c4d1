"""Triton code of calib_halving_sum (imported only by the profiling worker).

halve_kernel: y[i] = x[i] + x[i + h] for i < h = ceil(n / 2) (the second term 0 past n): one pairwise-halving
pass. v0 launches it until one element is left, the partial arrays alternating between two scratch buffers,
the last pass writing out[0].
chunk_kernel: program p sums X[p CHUNK:(p + 1) CHUNK] in tiles of BLOCK (a [BLOCK] fp32 accumulator, one tl.sum
at the end) into partials[p]; finish_kernel: one program sums the partials into out[0].
"""

import torch
import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

HALVE_BLOCK, HALVE_WARPS = 1024, 4
BLOCK, TILES, WARPS = 4096, 16, 8
CHUNK = BLOCK * TILES
FIN_BLOCK = 1024


@triton.jit
def halve_kernel(x_ptr, y_ptr, n, h, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(x_ptr + i, mask=i < h, other=0.0)
    b = tl.load(x_ptr + h + i, mask=h + i < n, other=0.0)
    tl.store(y_ptr + i, a + b, mask=i < h)


@triton.jit
def chunk_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr, TILES: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    base = pid * BLOCK * TILES
    acc = tl.zeros((BLOCK,), tl.float32)
    for t in range(TILES):
        i = base + t * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + i, mask=i < n, other=0.0)
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def finish_kernel(part_ptr, out_ptr, m, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, m, BLOCK):
        i = s + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + i, mask=i < m, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


def build_v0(inputs, params):
    x, out = inputs["X"], inputs["out"]
    n0 = params["N"]
    scratch = (
        torch.empty((n0 + 1) // 2, device=x.device, dtype=torch.float32),
        torch.empty((n0 + 3) // 4 + 1, device=x.device, dtype=torch.float32),
    )
    passes = []  # (source, destination, n, h): fixed by N, the plan's launches
    src, n, k = x, n0, 0
    while n > 1:
        h = (n + 1) // 2
        dst = out if h == 1 else scratch[k % 2]
        passes.append((src, dst, n, h))
        src, n, k = dst, h, k + 1

    def run():
        first = None
        for s, d, n, h in passes:
            k = halve_kernel[(triton.cdiv(h, HALVE_BLOCK),)](
                s, d, n, h, BLOCK=HALVE_BLOCK, num_warps=HALVE_WARPS
            )
            first = first or k
        return first

    tiling = {
        "BLOCK": HALVE_BLOCK,
        "num_warps": HALVE_WARPS,
        "passes": len(passes),
        "grid": [triton.cdiv(n0, 2 * HALVE_BLOCK)],
    }
    stage = Stage(
        "halving",
        run,
        kernel=halve_kernel,
        tiling=tiling,
        grid_blocks=triton.cdiv((n0 + 1) // 2, HALVE_BLOCK),
    )
    return Plan([stage], output=lambda: out)


def build_v1(inputs, params):
    x, out = inputs["X"], inputs["out"]
    n = params["N"]
    m = triton.cdiv(n, CHUNK)
    part = torch.empty(m, device=x.device, dtype=torch.float32)

    def chunks():
        return chunk_kernel[(m,)](x, part, n, BLOCK=BLOCK, TILES=TILES, num_warps=WARPS)

    def finish():
        return finish_kernel[(1,)](part, out, m, BLOCK=FIN_BLOCK, num_warps=4)

    return Plan(
        [
            Stage(
                "chunk_sums",
                chunks,
                kernel=chunk_kernel,
                tiling={"BLOCK": BLOCK, "TILES": TILES, "num_warps": WARPS, "grid": [m]},
                grid_blocks=m,
            ),
            Stage(
                "finish",
                finish,
                kernel=finish_kernel,
                tiling={"BLOCK": FIN_BLOCK, "num_warps": 4, "grid": [1]},
                grid_blocks=1,
            ),
        ],
        output=lambda: out,
    )
