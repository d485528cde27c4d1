"""Calibration pair (thirty-first held-back set) — a 256-bin histogram of byte values (an 8-bit image's or a
quantised tensor's value counts, per chunk) counted by comparing every element with every bin (the vectorised
"one-hot" histogram: ``(x[:, None] == torch.arange(256)).sum(0)`` written as a Triton tile: 256 compares and adds
an element), where a per-program histogram (``tl.histogram``: warp ballots and population counts, the warps'
counts merged in shared memory) gives the same counts. Sources: the Triton documentation of
``triton.language.histogram``; the CUDA C++ Programming Guide (warp vote functions ``__ballot_sync`` and the
``__popc`` intrinsic; the arithmetic-instruction throughput table: 32-bit integer compare and add); V. Podlozhnyuk,
"Histogram calculation in CUDA" (NVIDIA SDK white paper, 2007: per-warp sub-histograms instead of a pass per bin);
the CUDA C++ Best Practices Guide ("Arithmetic Instructions").

The work: counts [P, 256] int32 of x [N] uint8, P = ceil(N / 16384): the histogram of each 16384-element chunk
(a chunk a program), the same in both versions.

Planted problem (v0): stage "hist_onehot": 32 elements at a time, the [32, 256] tile (element == bin) added to a
[32, 256] int32 accumulator (an integer compare and an add for every element and every bin: ~512 integer
operations an element), the accumulator summed over its 32 rows at the end.
Fix (v1): stage "hist_ballot": the chunk loaded 4096 elements at a time and counted with tl.histogram (256 bins),
the four partial histograms added: a few integer operations an element, memory-bound.

Model (the needed work, for both): no FLOPs (integer counting); bytes: x read once (1 B an element) and the
counts written (1 KiB a chunk): N + 1024 P.

Expected on an H100/H200 (per design): v1 ~10-20 us (N = 2^24: 17 MB read at ~2-3 TB/s, a histogram's few
integer operations an element); v0 2^32 element-bin pairs, ~2 integer ALU operations each (64 a clock an SM):
~8e9 operations, ~0.4-0.8 ms: far above 3x (~20-50x). Cause "move_work" (the needed counts by a costlier method:
a compare for every bin where one ballot-based count per element serves); resource "alu" (the integer compares
and adds on the ALU pipe).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

BINS = 256
CHUNK = 16384  # elements a program (a chunk's histogram a row of the output)


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    n = p["N"]
    # a skewed byte distribution (an image's intensities): a normal bump plus uniform values, both ends present
    x = (torch.randn(n, generator=g) * 40.0 + 100.0).round().clamp(0, 255)
    u = torch.randint(0, 256, (n,), generator=g).to(x.dtype)
    x = torch.where(torch.rand(n, generator=g) < 0.3, u, x)
    x[::97] = 0.0
    x[1::89] = 255.0
    p_ = (n + CHUNK - 1) // CHUNK
    return {
        "X": x.to(torch.uint8).to(device),
        # Poisoned output: a version that does not write every count fails the check.
        "out": torch.full((p_, BINS), -1, device=device, dtype=torch.int32),
    }


def _reference(inputs, p):
    import torch

    x = inputs["X"].cpu().long()
    n = p["N"]
    p_ = (n + CHUNK - 1) // CHUNK
    rows = torch.arange(n) // CHUNK
    counts = torch.zeros(p_ * BINS, dtype=torch.int64)
    counts.scatter_add_(0, rows * BINS + x, torch.ones(n, dtype=torch.int64))
    return counts.view(p_, BINS).to(torch.int32).to(inputs["X"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 0.0


def _bytes(p):
    return float(p["N"]) + 4.0 * BINS * ((p["N"] + CHUNK - 1) // CHUNK)


KERNEL = KernelPackage(
    name="calib_hist_onehot",
    description="Calibration (held back, set 31; planted: a byte histogram counted by comparing every element "
    "with all 256 bins where a per-program ballot histogram serves): counts of 2^24 uint8 values a 16384-element "
    "chunk; v0 the one-hot compare-and-add tile, v1 tl.histogram",
    params=(
        Param("N", 1 << 24, min=1, max=1 << 30, doc="elements"),
        DTYPE_PARAM("int32", choices=("int32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: every element compared with every one of the 256 bins (a one-hot tile summed)",
            (StageModel("hist_onehot", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: each 4096-element block counted by tl.histogram (warp ballots and population counts)",
            (StageModel("hist_ballot", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
