"""Calibration pair (eighth held-back set) — a bucket index found by scanning every boundary where a binary
search over the sorted boundaries suffices (CUDA C++ Best Practices Guide, "Instruction optimization": do the
least work that gives the result; Nsight Compute's pipe utilisation: the integer/compare ALU pipe saturated by
work the algorithm does not need).

The work: ``torch.bucketize(x, b, right=True)``, the bin of each of N = 2^25 float32 values (fp16 allowed for
the CPU interpreter) among NB = 255 sorted float32 boundaries (256 bins: quantile binning of a feature, a
histogram's bin index, a value tokenizer): out[i] = #{j : b[j] <= x[i]} (int32). One program of 4 warps per
1024 values (8 per thread).

Planted problem (v0): the scan written the obvious way, ``for j in range(NB): cnt += x >= b[j]``: per value
255 compares and 255 selects/adds (~510 ALU lane operations per value, the boundary a uniform load hit in L1).
Fix (v1): a branch-free binary search: ``for s in 128, 64, ..., 1: pos = where(b[pos + s - 1] <= x, pos + s,
pos)`` (8 steps, each a compare, a select and a gather of one boundary per value from the L1-resident 1 KB
table); the same counts.

Model: x read once, the bins written once, the boundaries once (bytes 4·N + 4·N + 4·NB = 268 MB at the
defaults); the work counted as the binary search's compares, ceil(log2(NB + 1)) per value, as "flops" (2.7e8).

Expected on an H100 SXM (per design): v1 ~268 MB → ~90 µs at the DRAM peak, the 8 gathers per value (~0.75
L1 wavefront a value) ~110 µs: ~0.1-0.15 ms; v0 2^25 · 510 lane operations / (64 ALU lanes · 132 SMs ·
1.755 GHz) ≈ 1.15 ms: ~8x. v0's limiter is the ALU pipe (resource "alu": float compares and selects); the fix
removes work the result does not need (cause "move_work").
Tolerance: integer bins: exact (0).
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench, L2 flushed) v0 952 µs (the loop's body
8 setp.le.f32 and 8 selp.b32, one per value of the thread, 33 registers), v1 173 µs (64 setp/selp and 64 scalar
boundary loads unrolled; 1.55 TB/s of the model's bytes): 5.5x; recorded event medians v0 1438 µs, v1 253 µs
(+469 %).
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def steps(nb):
    """Binary-search steps for NB boundaries: the smallest L with 2^L > NB (counts 0..NB)."""
    return max(1, int(nb).bit_length())


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    x = torch.randn(p["N"], generator=g, device=device, dtype=torch.float32).to(dt)
    b = torch.randn(p["NB"], generator=g, device=device, dtype=torch.float32).sort().values * 1.2
    # Poisoned output: -1 wherever a version fails to write shows up in the check.
    return {"x": x, "b": b, "out": torch.full((p["N"],), -1, device=device, dtype=torch.int32)}


def _reference(inputs, p):
    import torch

    return torch.bucketize(inputs["x"].float(), inputs["b"], right=True).to(torch.int32)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(p.itemsize * p["N"] + 4 * p["N"] + 4 * p["NB"])


_STAGE = StageModel("bucketize", flops=lambda p: float(p["N"] * steps(p["NB"])), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_bucketize",
    description="Calibration (held back, set 8; planted: bucket index by a linear scan of the boundaries): "
    "torch.bucketize(x, b, right=True) of float32 values among 255 sorted boundaries; v0 a compare per "
    "boundary, v1 a binary search",
    params=(
        Param("N", 1 << 25, min=1, max=1 << 30, doc="values"),
        Param("NB", 255, min=1, max=4095, doc="sorted boundaries (NB + 1 bins)"),
        Param("dtype", "float32", choices=("float32", "float16"), doc="values' dtype (boundaries float32)"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: a compare-and-add for every boundary (linear scan)",
            (_STAGE,),
            _build("v0"),
        ),
        Version("v1", "fix: a branch-free binary search over the boundaries", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
