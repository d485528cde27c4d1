"""Calibration pair (fifteenth held-back set) — an output zero-filled before a kernel that writes all of it:
the output buffer allocated with torch.zeros (or cleared with .zero_()) "to be safe" before a kernel
that stores every element of it, so a fill kernel writes the whole output once more, to be overwritten.
Triton's tutorials allocate their outputs with torch.empty for this reason; the zeroing is needed only
where a kernel accumulates into the buffer (atomics, split reductions) or leaves parts unwritten.
Sources: the PyTorch documentation of torch.empty ("uninitialized data") and torch.zeros; Triton's
tutorials (vector addition, fused softmax, matmul: ``torch.empty_like`` / ``torch.empty`` outputs);
the CUDA C++ Best Practices Guide, "Minimize data transfers / maximize memory throughput" (every byte
written to device memory costs bandwidth).

The work: the matrix of squared distances D[i, j] = |p_i - q_j|² of N = 8192 points P [N, 3] against
M = 8192 points Q [M, 3] (fp32; fp16 points allowed), D fp32 [N, M] (256 MB): the input of a radius
graph, a k-NN selection or an RBF kernel. The distance kernel: one program per 32 x 256 tile of D,
4 warps, the tile's 32 + 256 points loaded once, one store of the tile: write-bound.

Planted problem (v0): stage "zero" (a fill kernel, 4096 values a program, writes the 256 MB of D with
zeros), then stage "dist" (the distance kernel, which writes every element of D).
Fix (v1): stage "dist" alone (D allocated without initialisation: the kernel writes all of it).

Model: stage "dist": 8 FLOPs a distance (3 subtractions, 3 multiply-adds, ~2 more), bytes the points
read once and D written once (N·M·4 + (N + M)·3·itemsize); stage "zero": the bytes it writes (N·M·4),
no FLOPs.

Expected on an H100 SXM (per design): each full write of D ~85-95 µs at ~2.8-3 TB/s; v0 two writes
~0.18 ms, v1 one ~0.09 ms: ~2x. Cause "over_fetch" (the fill's 256 MB are dead stores: bytes the
result does not need), resource "dram".
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    dt = getattr(torch, p["dtype"])
    n, m = p["N"], p["M"]
    pts = (torch.rand(n, 3, generator=g) * 4 - 2).to(device=device, dtype=dt)
    qts = (torch.rand(m, 3, generator=g) * 4 - 2).to(device=device, dtype=dt)
    # Poisoned output: a version that does not write every element fails the check.
    return {"p": pts, "q": qts, "d": torch.full((n, m), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    a, b = inputs["p"].double(), inputs["q"].double()
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _out_bytes(p):
    return 4.0 * p["N"] * p["M"]


def _dist_bytes(p):
    return _out_bytes(p) + 3.0 * (p["N"] + p["M"]) * p.itemsize


_DIST = StageModel("dist", flops=lambda p: 8.0 * p["N"] * p["M"], bytes=_dist_bytes)
_ZERO = StageModel("zero", flops=lambda p: 0.0, bytes=_out_bytes)

KERNEL = KernelPackage(
    name="calib_zeroed_out",
    description="Calibration (held back, set 15; planted: an output zero-filled before a kernel that writes "
    "all of it): the 8192 x 8192 fp32 matrix of squared distances between two point sets; v0 a fill kernel "
    "zeroes D, then the distance kernel writes it; v1 the distance kernel alone",
    params=(
        Param("N", 8192, min=1, max=1 << 17, doc="points in P (rows of D)"),
        Param("M", 8192, min=1, max=1 << 17, doc="points in Q (columns of D)"),
        Param("dtype", "float32", choices=("float32", "float16"), doc="the points' dtype (D is fp32)"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the output zero-filled by a fill kernel, then every element written by the distance kernel",
            (_ZERO, _DIST),
            _build("v0"),
        ),
        Version(
            "v1", "fix: the distance kernel alone (the output left uninitialised)", (_DIST,), _build("v1")
        ),
    ),
    memory_bytes=_dist_bytes,
    tolerance=lambda dtype: 1e-5,
)
