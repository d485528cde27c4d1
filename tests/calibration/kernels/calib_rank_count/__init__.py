"""Calibration pair (thirty-third held-back set) — the rank of every element within its row (its position in a
stable ascending sort: the ranks a Spearman correlation, a rank-based loss or a quantile normalisation needs)
found by counting, for every element, the elements of the row ordered before it (N comparisons an element, N^2
a row), where sorting the row once (a bitonic network, ~N log2(N)^2 / 2 compare-exchanges) and scattering the
positions gives the same ranks. Sources: D. E. Knuth, The Art of Computer Programming vol. 3, 5.2 ("sorting by
counting": N^2 comparisons, the method to avoid for large N); K. E. Batcher, "Sorting networks and their
applications" (AFIPS 1968: the bitonic sorter); the Triton language reference (tl.sort); the CUDA C++
Programming Guide (arithmetic instruction throughput: integer compare and add on the ALU).

The work: ranks [M, N] int32 of x [M, N] fp32 (values in [1, 2): ties possible, broken by index as a stable sort
does): each element's key (its float bits << 32) + its column; its rank the number of keys of the row below it.

Planted problem (v0): stage "rank_count": one program a row (N = 2048, 8 warps: 8 elements a thread); for each of
the row's N elements j (a scalar load and its key), every element's key compared with it and the count
incremented: N^2 = 4.2e6 64-bit compares and adds a row on the ALU.
Fix (v1): stage "rank_sort": one program a row; the N keys sorted by tl.sort (66 compare-exchange stages for
N = 2048), each sorted position stored at its element's column (the index in the key's low bits).

Model (the needed work, for both): FLOPs 0 (integer work); bytes x read and the ranks written (8 M N).

Expected on an H100/H200 (per design): v0 ~0.3-0.7 ms at M = 512 (~9e9 integer instructions: 4 a pair); v1
~20-60 us (~1000 instructions an element for the sort): ~6-15x. Cause "move_work" (the needed ranks by a costlier
method); resource "alu" (the integer compares and adds).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    m, n = p["M"], p["N"]
    g = torch.Generator(device="cpu").manual_seed(0)
    x = 1.0 + torch.rand(m, n, generator=g)
    x[:, 1::7] = x[:, 0:1]  # a few exact ties in every row (broken by index)
    return {
        "x": x.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((m, n), -1, device=device, dtype=torch.int32),
    }


def _reference(inputs, p):
    import torch

    x = inputs["x"].cpu()
    order = torch.argsort(x, dim=1, stable=True)
    rank = torch.empty_like(order)
    rank.scatter_(1, order, torch.arange(x.shape[1]).expand_as(order).contiguous())
    return rank.int().to(inputs["x"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 0.0


def _bytes(p):
    return 8.0 * p["M"] * p["N"]


KERNEL = KernelPackage(
    name="calib_rank_count",
    description="Calibration (held back, set 33; planted: ranks within a row counted by comparing every pair "
    "where one sort of the row serves): ranks of x [512, 2048] fp32; v0 N^2 key comparisons a row, v1 tl.sort "
    "and a scatter of the positions",
    params=(
        Param("M", 512, min=1, max=1 << 20, doc="rows"),
        Param("N", 2048, min=2, max=8192, doc="row length (a power of two)"),
        DTYPE_PARAM("int32", choices=("int32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: every element's rank counted over all N elements of its row (N^2 compares a row)",
            (StageModel("rank_count", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the row's keys sorted once (tl.sort), each position scattered to its element",
            (StageModel("rank_sort", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
