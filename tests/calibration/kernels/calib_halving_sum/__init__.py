"""Calibration pair (twenty-fifth held-back set) — a sum of a large array reduced by repeated pairwise-halving
kernel launches (each pass adds the array's second half onto its first half and writes the half-length result
to global memory, log2(N) passes), as first GPU reduction code often does: every pass's partial sums go out to
global memory and come back in the next pass. The fix: one pass in which each program reduces a long chunk on
chip (tl.sum over a loop of tiles) and writes one partial, and a small finishing pass over the partials; the same
sum up to rounding. Sources: Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007: multiple
elements per thread, the tree kept in on-chip memory, one partial per block, recursion only over the partials),
the CUDA C++ Best Practices Guide ("Minimize data transfer ... between global memory and the device": keep
intermediates on chip), the Triton tutorial "Fused Softmax" (a reduction kept in registers).

The work: out [1] fp32 = sum of X [N] fp32.

Planted problem (v0): stage "halving": log2(N) launches of halve_kernel (y[i] = x[i] + x[i + ceil(n/2)]), the
partial arrays (N/2, N/4, ... elements) written to and read back from global memory: about 3x the bytes of
one read of X, plus ~20 small passes at the end whose launches and latency add ~50-100 us.
Fix (v1): stage "chunk_sums": each program sums a chunk of CHUNK elements on chip into partials[p]; stage
"finish": one program sums the partials.

Model: N - 1 additions; bytes: X read once (4 N) and the scalar written (the needed traffic, for both).

Expected on an H100/H200 (per design): v1 ~0.25 ms (1 GiB at ~4.3 TB/s); v0 ~3 GiB of DRAM traffic (~0.75 ms)
plus the small passes: ~0.8-0.9 ms: ~3x. Cause "fusion" (several kernels where one would keep the partial sums
on chip: the fix removes the intermediate arrays' round trips), resource "dram".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.rand(p["N"], generator=gen, dtype=torch.float32)
    return {
        "X": x.to(device),
        # Poisoned output: a version that does not write it fails the check.
        "out": torch.full((1,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    return inputs["X"].double().sum().reshape(1).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return float(p["N"] - 1)


def _bytes(p):
    return 4.0 * p["N"] + 4.0


def _zero(p):
    return 0.0


def _bytes_finish(p):
    from .impl import CHUNK

    return 4.0 * (-(-p["N"] // CHUNK)) + 4.0


KERNEL = KernelPackage(
    name="calib_halving_sum",
    description="Calibration (held back, set 25; planted: a sum reduced by log2(N) pairwise-halving kernel "
    "passes through global memory): out = sum of X [2^28] fp32; v0 one launch per halving (partials written "
    "and re-read), v1 one pass of per-program chunk sums on chip plus a finishing pass",
    params=(
        Param("N", 1 << 28, min=2, max=1 << 31, doc="elements of X"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: log2(N) pairwise-halving launches, partial arrays through global memory",
            (StageModel("halving", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: per-program chunk sums on chip, then one finishing program",
            (
                StageModel("chunk_sums", flops=_flops, bytes=_bytes),
                StageModel("finish", flops=_zero, bytes=_bytes_finish),
            ),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
