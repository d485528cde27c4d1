"""Triton code of calib_two_pass_var (imported only by the profiling worker).

Grid (C, SPLIT): one program a chunk of M / SPLIT values of a row, BLOCK values a step (a [BLOCK] tile of
per-lane accumulators), 4 warps; partial results in part_a / part_b [C, SPLIT]; a finishing kernel of C
programs:

    v0: sum_kernel (part_a = chunk sums), sqdev_kernel (mean from part_a; part_b = sums of (x - mean)^2
        over the chunk: x read again), finish_two_pass_kernel;
    v1: welford_kernel (per lane: delta = x - mean; mean += delta * (1 / n); M2 += delta * (x - mean), n the step
        count, the same in every lane; lanes merged with Chan's formula; part_a = chunk means, part_b =
        chunk M2), finish_welford_kernel (the chunks merged the same way: equal counts).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

WARPS = 4


@triton.jit
def sum_kernel(x_ptr, part_a, m, split, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    c, s = tl.program_id(0), tl.program_id(1)
    base = x_ptr + c.to(tl.int64) * m + s * CHUNK
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(0, CHUNK, BLOCK):
        acc += tl.load(base + i + tl.arange(0, BLOCK)).to(tl.float32)
    tl.store(part_a + c * split + s, tl.sum(acc, 0))


@triton.jit
def sqdev_kernel(
    x_ptr, part_a, part_b, m, split, CHUNK: tl.constexpr, BLOCK: tl.constexpr, SPLIT_P2: tl.constexpr
):
    c, s = tl.program_id(0), tl.program_id(1)
    k = tl.arange(0, SPLIT_P2)
    mean = tl.sum(tl.load(part_a + c * split + k, mask=k < split, other=0.0), 0) / m
    base = x_ptr + c.to(tl.int64) * m + s * CHUNK
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(0, CHUNK, BLOCK):
        d = tl.load(base + i + tl.arange(0, BLOCK)).to(tl.float32) - mean
        acc += d * d
    tl.store(part_b + c * split + s, tl.sum(acc, 0))


@triton.jit
def finish_two_pass_kernel(part_a, part_b, out_ptr, m, split, c_total, SPLIT_P2: tl.constexpr):
    c = tl.program_id(0)
    k = tl.arange(0, SPLIT_P2)
    mean = tl.sum(tl.load(part_a + c * split + k, mask=k < split, other=0.0), 0) / m
    var = tl.sum(tl.load(part_b + c * split + k, mask=k < split, other=0.0), 0) / m
    tl.store(out_ptr + c, mean)
    tl.store(out_ptr + c_total + c, var)


@triton.jit
def welford_kernel(x_ptr, part_a, part_b, m, split, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    c, s = tl.program_id(0), tl.program_id(1)
    base = x_ptr + c.to(tl.int64) * m + s * CHUNK
    mean = tl.zeros([BLOCK], tl.float32)
    m2 = tl.zeros([BLOCK], tl.float32)
    n = 0.0
    for i in range(0, CHUNK, BLOCK):
        x = tl.load(base + i + tl.arange(0, BLOCK)).to(tl.float32)
        n += 1.0
        r = 1.0 / n  # a scalar: one division a step, not an element
        delta = x - mean
        mean += delta * r
        m2 += delta * (x - mean)
    # Chan's merge of the BLOCK lanes (n values each): equal counts.
    cmean = tl.sum(mean, 0) / BLOCK
    dm = mean - cmean
    cm2 = tl.sum(m2, 0) + n * tl.sum(dm * dm, 0)
    tl.store(part_a + c * split + s, cmean)
    tl.store(part_b + c * split + s, cm2)


@triton.jit
def finish_welford_kernel(part_a, part_b, out_ptr, m, split, c_total, SPLIT_P2: tl.constexpr):
    c = tl.program_id(0)
    k = tl.arange(0, SPLIT_P2)
    valid = k < split
    means = tl.load(part_a + c * split + k, mask=valid, other=0.0)
    m2s = tl.load(part_b + c * split + k, mask=valid, other=0.0)
    mean = tl.sum(means, 0) / split
    dm = tl.where(valid, means - mean, 0.0)
    chunk = m / split
    m2 = tl.sum(m2s, 0) + chunk * tl.sum(dm * dm, 0)
    tl.store(out_ptr + c, mean)
    tl.store(out_ptr + c_total + c, m2 / m)


def _shape(inputs, p):
    x = inputs["x"]
    c, m = x.shape
    split = p["SPLIT"]
    chunk = m // split
    block = min(4096, chunk)
    if m % split or chunk % block or block & (block - 1):
        raise ValueError(f"M = {m} must split into {split} chunks of a multiple of a power-of-two BLOCK")
    return x, c, m, split, chunk, block, triton.next_power_of_2(split)


def build_v0(inputs, p):
    x, c, m, split, chunk, block, sp2 = _shape(inputs, p)
    a, b, out = inputs["part_a"], inputs["part_b"], inputs["out"]
    tiling = {"BLOCK": block, "CHUNK": chunk, "num_warps": WARPS, "grid": [c, split]}

    def s1():
        return sum_kernel[(c, split)](x, a, m, split, CHUNK=chunk, BLOCK=block, num_warps=WARPS)

    def s2():
        return sqdev_kernel[(c, split)](
            x, a, b, m, split, CHUNK=chunk, BLOCK=block, SPLIT_P2=sp2, num_warps=WARPS
        )

    def s3():
        return finish_two_pass_kernel[(c,)](a, b, out, m, split, c, SPLIT_P2=sp2, num_warps=1)

    return Plan(
        [
            Stage("sum", s1, kernel=sum_kernel, tiling=tiling, grid_blocks=c * split),
            Stage("sqdev", s2, kernel=sqdev_kernel, tiling=tiling, grid_blocks=c * split),
            Stage(
                "finish",
                s3,
                kernel=finish_two_pass_kernel,
                tiling={"num_warps": 1, "grid": [c]},
                grid_blocks=c,
            ),
        ],
        output=lambda: out,
    )


def build_v1(inputs, p):
    x, c, m, split, chunk, block, sp2 = _shape(inputs, p)
    a, b, out = inputs["part_a"], inputs["part_b"], inputs["out"]
    tiling = {"BLOCK": block, "CHUNK": chunk, "num_warps": WARPS, "grid": [c, split]}

    def s1():
        return welford_kernel[(c, split)](x, a, b, m, split, CHUNK=chunk, BLOCK=block, num_warps=WARPS)

    def s2():
        return finish_welford_kernel[(c,)](a, b, out, m, split, c, SPLIT_P2=sp2, num_warps=1)

    return Plan(
        [
            Stage("welford", s1, kernel=welford_kernel, tiling=tiling, grid_blocks=c * split),
            Stage(
                "finish",
                s2,
                kernel=finish_welford_kernel,
                tiling={"num_warps": 1, "grid": [c]},
                grid_blocks=c,
            ),
        ],
        output=lambda: out,
    )
