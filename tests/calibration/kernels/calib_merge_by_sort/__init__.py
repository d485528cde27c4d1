"""Calibration pair (fortieth held-back set) — rows made of two sorted runs (each row's first and second halves
already in ascending order: the candidates of two shards, two sorted score lists, the two halves a merge sort
brings together) put in order by a full bitonic sort of the row (tl.sort: log2(n) (log2(n) + 1) / 2
compare-exchange stages over the whole row), where one bitonic merge serves: the second run read in reverse
makes the row bitonic, and log2(n) half-cleaner stages sort it. Sources: K. E. Batcher, "Sorting networks and
their applications" (AFIPS 1968: the bitonic merger, log2(n) stages, and the sorter built from log2(n) mergers);
D. E. Knuth, TAOCP vol. 3, 5.3.4 (merging networks); O. Green, R. McColl, D. A. Bader, "GPU Merge Path"
(ICS 2012: merging two sorted arrays on a GPU in linear work); the Triton language reference (tl.sort, a
bitonic sorting network); the torch.sort(torch.cat([a, b])) idiom for merging sorted lists.

The work: y [R, n] fp32 = each row of x [R, n] fp32 in ascending order, where x[r, :n/2] and x[r, n/2:] are
each ascending (R = 4096, n = 2048); exactly the same values in both versions (compare-exchange networks move
values, they do not compute new ones).

Planted problem (v0): stage "sort_full": a program a row (4 warps) loads the row and calls tl.sort: 11 x 12 / 2 =
66 compare-exchange stages over 2048 elements.
Fix (v1): stage "merge_runs": a program a row loads the first run ascending and the second descending (the row
bitonic), then 11 half-cleaner stages (distance 1024 down to 1, each a min and a max per pair).

Model (the needed work, for both): int_ops ~ 2 compares-and-selects a pair a merge stage: n / 2 x log2(n) x 3 a
row; bytes the row read and written: 8 R n = 6.7e7.

Expected on an H100/H200 (per design): v0 66 network stages (in-thread selects for the first four distances,
warp shuffles, then shared-memory exchanges for distances of 512 and more): ~0.15-0.3 ms; v1 11 stages and the
same 67 MB of DRAM traffic: ~25-45 us: ~4-7x. Cause "move_work" (the needed ordering by a costlier method, a
full sorting network where a merging network serves); resource "issue" (compare, select and shuffle
instructions, no memory level near its roof).
"""

import math

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    r, n = p["R"], p["n"]
    h = n // 2
    a = torch.randn(r, h, generator=g).sort(dim=1).values
    b = (0.5 + 2.0 * torch.randn(r, n - h, generator=g)).sort(dim=1).values  # overlapping, unequal runs
    return {
        "x": torch.cat([a, b], dim=1).contiguous().to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((r, n), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    return inputs["x"].sort(dim=1).values


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _int_ops(p):
    return 3.0 * p["R"] * (p["n"] / 2) * math.log2(max(p["n"], 2))


def _bytes(p):
    return 8.0 * p["R"] * p["n"]


KERNEL = KernelPackage(
    name="calib_merge_by_sort",
    description="Calibration (held back, set 40; planted: two sorted runs per row put in order by a full bitonic "
    "sort where one bitonic merge serves): 4096 rows of 2048 fp32; v0 tl.sort of the row, v1 the second run "
    "read in reverse and 11 half-cleaner stages",
    params=(
        Param("R", 4096, min=1, max=1 << 20, doc="rows"),
        Param("n", 2048, min=2, max=8192, doc="row length (a power of two: two runs of n / 2)"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the row sorted by a full bitonic sorting network (tl.sort)",
            (StageModel("sort_full", flops=lambda p: 0.0, bytes=_bytes, int_ops=_int_ops),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the second run read in reverse, one bitonic merge (log2(n) half-cleaner stages)",
            (StageModel("merge_runs", flops=lambda p: 0.0, bytes=_bytes, int_ops=_int_ops),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
