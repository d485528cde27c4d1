"""Calibration pair (fourteenth held-back set) — a prefix sum computed as a masked triangular sum: the
inclusive cumulative sum along short rows (the chunk-local cumsums of chunked linear attention and state-space
scans, the segment sums of Mamba-2's SSD, per-row running totals, a ragged batch's offsets) written as, for
each output column j, the sum of the row's elements masked to columns <= j: tl.sum(tl.where(cols <= j, x,
0), axis=1), L of them for a row of L. That is L^2 / 2 useful adds (L^2 selects and adds as written) where a
scan needs about L log L. Triton has the scan: ``tl.cumsum`` (``tl.associative_scan``). Sources: Blelloch,
"Prefix sums and their applications" (CMU-CS-90-190, 1990); Harris, Sengupta & Owens, "Parallel Prefix Sum
(Scan) with CUDA", GPU Gems 3, ch. 39 (2007); Triton's ``tl.cumsum`` / ``tl.associative_scan``
documentation; Dao & Gu, "Transformers are SSMs" (2024: the segsum of SSD computed from a cumsum, not a
masked triangular sum).

The work: R = 2^20 rows of L = 64 fp32 values (fp16 allowed), out = cumsum(x, axis=1) in the input dtype,
accumulated in fp32. One program per BLOCK_R = 64 rows (a [64, 64] tile loaded and stored coalesced), 4
warps, R / 64 = 16384 programs, in both versions.

Planted problem (v0): for j in range(L): s_j = tl.sum(tl.where(cols <= j, x, 0), axis=1);
acc = tl.where(cols == j, s_j, acc): per element and column, two selects and an add (with the reduction's
shuffles): in the PTX for sm_90 (Triton 3.9, checked before any GPU run), per column and thread of 32
elements: 64 selp, 40 add.f32, 12 shfl, ~8 setp: ~4 instructions x 64 columns an element, 2.5 of them on
the integer/logic pipe (selects, compares).
Fix (v1): tl.cumsum(x, axis=1): the same sums by a scan (~10-20 instructions an element).

Model: x read once, out written once: bytes 2 R L itemsize; FLOPs R L (one add an element, the scan's).

Expected on an H100 SXM (per design): v1 memory-bound, 2^26 elements x 8 B = 537 MB: ~0.18 ms; v0 ~250
instructions an element, ~160 of them selects and compares (ALU, 64 lanes a clock per SM): ~0.7 ms: ~4x
(fp16: ~8x). Cause
"move_work" (the same prefix sums by a costlier algorithm), resource "alu" (the selects; "issue" is the
other reading: the adds and shuffles fill the remaining issue slots).
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    return {
        "x": torch.randn(p["R"], p["L"], generator=g).to(device=device, dtype=dt),
        # Poisoned output: a version that does not write fails the check.
        "out": torch.full((p["R"], p["L"]), float("nan"), device=device, dtype=dt),
    }


def _reference(inputs, p):
    x = inputs["x"]
    return x.float().cumsum(dim=1).to(x.dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(2 * p["R"] * p["L"] * p.itemsize)


_STAGE = StageModel("row_cumsum", flops=lambda p: float(p["R"] * p["L"]), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_tri_prefix",
    description="Calibration (held back, set 14; planted: a prefix sum computed as a masked triangular sum): "
    "inclusive cumsum along 2^20 rows of 64 fp32 values; v0 one masked tl.sum per output column, v1 "
    "tl.cumsum",
    params=(
        Param("R", 1 << 20, min=1, max=1 << 26, doc="rows"),
        Param("L", 64, min=16, max=128, doc="row length (one tile wide: a power of two)"),
        Param("dtype", "float32", choices=("float32", "float16"), doc="x and out dtype (fp32 accumulation)"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: one masked tl.sum per output column", (_STAGE,), _build("v0")),
        Version("v1", "fix: tl.cumsum along the row", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 2e-3 if dtype == "float16" else 1e-5,
)
