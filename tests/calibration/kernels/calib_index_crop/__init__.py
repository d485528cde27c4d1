"""Calibration pair (nineteenth held-back set) — a crop gathered through a materialised per-element index
tensor where a strided slice serves: a window of columns x[:, c0:c0 + W] taken as ``torch.gather(x, 1,
idx)`` / ``x.view(-1)[flat_idx]`` with the index built element by element (``arange(...).repeat(R, 1)``,
row offsets added: an int64 tensor as large as the crop), so every output element costs an 8-byte index
read besides its 2-byte value. The slice addresses the same elements by arithmetic on the program's
coordinates: no index bytes. Sources: the NumPy documentation, "Indexing on ndarrays" (basic slicing
views; advanced (integer-array) indexing always copies and reads its index arrays), the PyTorch
documentation of torch.gather (the index has the output's shape), and the CUDA C++ Best Practices Guide
("Memory Optimizations": device-memory bandwidth as the limiter; minimise the bytes moved).

The work: x [R, C] fp16 (R = 16384 rows, C = 8192 columns), the crop x[:, c0:c0 + W] (c0 = 1024,
W = 4096) written contiguous to out [R, W] fp16. idx [R·W] int64 (the flat offsets r·C + c0 + j, built
once as the user's code builds it: an input, not timed).

Planted problem (v0): stage "gather": one program per 4096 output elements (4 warps), out[i] =
x[idx[i]]: the index read (8 bytes an element), then the value (2 bytes), the output written (2 bytes).
Fix (v1): stage "slice": a 2-D grid (rows, 1024-column blocks), out[r, j] = x[r·C + c0 + j]: 4 bytes an
element.

Model: gather 12 bytes an element (R·W elements), slice 4; no FLOPs.

Expected on an H100 SXM (per design): v0 805 MB at ~3 TB/s ~0.27 ms, v1 268 MB ~0.09-0.1 ms: ~2.7-3x.
Cause "over_fetch" (the index's bytes: bytes moved that the result does not need), resource "dram".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    r, c, c0, w = p["R"], p["C"], p["C0"], p["W"]
    if c0 + w > c:
        raise ValueError("C0 + W must not exceed C")
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(r, c, generator=g).to(torch.float16)
    # the index as the user built it: the crop's columns repeated for every row, plus each row's offset
    idx = (torch.arange(r)[:, None] * c + (c0 + torch.arange(w)).repeat(r, 1)).reshape(-1)
    return {
        "x": x.to(device),
        "idx": idx.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((r, w), float("nan"), device=device, dtype=torch.float16),
    }


def _reference(inputs, p):
    return inputs["x"][:, p["C0"] : p["C0"] + p["W"]].clone()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _elems(p):
    return float(p["R"]) * p["W"]


_GATHER = StageModel("gather", flops=lambda p: 0.0, bytes=lambda p: 12.0 * _elems(p))
_SLICE = StageModel("slice", flops=lambda p: 0.0, bytes=lambda p: 4.0 * _elems(p))

KERNEL = KernelPackage(
    name="calib_index_crop",
    description="Calibration (held back, set 19; planted: a crop gathered through a materialised "
    "per-element index tensor where a strided slice serves): x [16384, 8192] fp16, columns 1024..5119 "
    "copied out; v0 out[i] = x[idx[i]] with idx int64; v1 the slice by address arithmetic",
    params=(
        Param("R", 16384, min=1, max=1 << 20, doc="rows"),
        Param("C", 8192, min=1, max=1 << 20, doc="columns of x"),
        Param("C0", 1024, min=0, max=1 << 20, doc="first column of the crop"),
        Param("W", 4096, min=1, max=1 << 20, doc="columns of the crop"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: out[i] = x[idx[i]], idx an int64 tensor of flat offsets (12 bytes an element)",
            (_GATHER,),
            _build("v0"),
        ),
        Version(
            "v1", "fix: the slice addressed by row and column (4 bytes an element)", (_SLICE,), _build("v1")
        ),
    ),
    memory_bytes=lambda p: 2.0 * p["R"] * p["C"] + 10.0 * _elems(p),
    tolerance=lambda dtype: 0.0,
)
