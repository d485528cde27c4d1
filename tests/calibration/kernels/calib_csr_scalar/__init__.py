"""Calibration pair (twelfth held-back set) — a sparse row's nonzeros walked one at a time: a CSR
sparse-matrix-vector product y = A x written as CPU-style scalar code, one program per row looping
``for j in range(start, end)`` over the row's nonzeros with scalar loads (the column index, then the value
and x[column], then one FMA), so each nonzero is a dependent chain of two memory round trips and a program has
one load in flight at a time (Bell and Garland, "Efficient Sparse Matrix-Vector Multiplication on CUDA",
NVIDIA Technical Report NVR-2008-004, 2008: the "CSR (scalar)" kernel against the "CSR (vector)" kernel that
gives a row a warp; CUDA C++ Best Practices Guide, "Memory Optimizations": hide latency with independent
memory operations in flight).

The work: y = A x for a banded sparse matrix (ROWS = 2^20 rows and columns, 16-48 nonzeros a row, 32 on
average, 33.5 M in all, the columns within ±4096 of the diagonal as from a mesh or a graph with locality;
CSR: int32 row pointers and column indices, fp16 values; fp32 allowed) and x (the values' dtype); y fp32.
One program of 1 warp per row in both versions.

Planted problem (v0): the row walked one nonzero at a time with scalar loads: per nonzero the column index
load, then the dependent x[column] load, and the value, then the FMA: ~32 dependent round trips a row (a
DRAM miss every 8 column indices and 16 values, L1/L2 hits for the rest and for x), one at a time; one-warp
programs, at most 32 resident per SM: ~4200 rows in flight, each ~32 serial round trips.
Fix (v1): the row's nonzeros loaded 32 at a time (one per lane: ``cols = tl.load(col + j0 + arange(32))``,
masked at the row's end), x gathered for all 32 at once, a 32-wide product summed at the end: one or two
rounds of independent loads a row.

Model: the row pointers, column indices and values read once, x read once, y written once (bytes 4·(ROWS+1)
+ 4·NNZ + itemsize·NNZ + itemsize·ROWS + 4·ROWS ≈ 210 MB at the defaults); FLOPs 2·NNZ.

Expected on an H100 SXM (per design): v1 ~210 MB, 1-2 rounds of loads a row, ~0.1-0.3 ms; v0 ~32 serial
round trips a row (~3-6 µs a row), 2^20 / 4224 ≈ 250 rounds of resident rows: ~1-1.5 ms: ~4-10x. The warps
wait on dependent loads with no pipe and no memory level busy: cause "latency", resource None.
Tolerance: a 16-48-term fp32 sum of fp16 products: the fp32 default scaled (1e-5), fp16 operands are exact in
fp32 and only the summation order differs.
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _csr(p, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    rows, band = p["ROWS"], p["BAND"]
    lo, hi = p["MIN_NNZ"], p["MAX_NNZ"]
    lens = torch.randint(lo, hi + 1, (rows,), generator=g, dtype=torch.int64)
    rowptr = torch.zeros(rows + 1, dtype=torch.int64)
    rowptr[1:] = torch.cumsum(lens, 0)
    nnz = int(rowptr[-1])
    row_of = torch.repeat_interleave(torch.arange(rows), lens)
    cols = (row_of + torch.randint(-band, band + 1, (nnz,), generator=g)).clamp_(0, rows - 1)
    return g, rowptr, cols, row_of


def _inputs(p, device, seed=0):
    import torch

    if p["MIN_NNZ"] > p["MAX_NNZ"]:
        raise ValueError("MIN_NNZ must be <= MAX_NNZ")
    dt = getattr(torch, p["dtype"])
    g, rowptr, cols, _ = _csr(p, seed)
    nnz = cols.numel()
    return {
        "rowptr": rowptr.to(torch.int32).to(device),
        "cols": cols.to(torch.int32).to(device),
        "vals": torch.randn(nnz, generator=g).to(device=device, dtype=dt),
        "x": torch.randn(p["ROWS"], generator=g).to(device=device, dtype=dt),
        # Poisoned output: NaN wherever a version fails to write shows up in the check.
        "out": torch.full((p["ROWS"],), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    rowptr = inputs["rowptr"].long()
    lens = rowptr[1:] - rowptr[:-1]
    row_of = torch.repeat_interleave(torch.arange(p["ROWS"], device=rowptr.device), lens)
    prod = inputs["vals"].double() * inputs["x"].double()[inputs["cols"].long()]
    return (
        torch.zeros(p["ROWS"], dtype=torch.float64, device=rowptr.device).index_add_(0, row_of, prod).float()
    )


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _nnz(p):
    return p["ROWS"] * (p["MIN_NNZ"] + p["MAX_NNZ"]) / 2


def _bytes(p):
    return float(4 * (p["ROWS"] + 1) + (4 + p.itemsize) * _nnz(p) + (p.itemsize + 4) * p["ROWS"])


_STAGE = StageModel("spmv", flops=lambda p: float(2 * _nnz(p)), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_csr_scalar",
    description="Calibration (held back, set 12; planted: a sparse row's nonzeros walked one at a time): CSR "
    "y = A x (2^20 rows, 32 nonzeros a row on average, banded); v0 one program per row looping over its "
    "nonzeros with scalar loads, v1 the row's nonzeros loaded 32 at a time (a lane each)",
    params=(
        Param("ROWS", 1 << 20, min=1, max=1 << 24, doc="rows (and columns) of A"),
        Param("MIN_NNZ", 16, min=0, max=4096, doc="fewest nonzeros a row"),
        Param("MAX_NNZ", 48, min=0, max=4096, doc="most nonzeros a row"),
        Param("BAND", 4096, min=0, max=1 << 24, doc="columns within ±BAND of the diagonal"),
        Param("dtype", "float16", choices=("float16", "float32"), doc="values and x dtype (y is float32)"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0", "planted: the row's nonzeros walked one at a time (scalar loads)", (_STAGE,), _build("v0")
        ),
        Version("v1", "fix: the row's nonzeros loaded 32 at a time", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: float(
        4 * (p["ROWS"] + 1) + (4 + p.itemsize) * p["ROWS"] * p["MAX_NNZ"] + 8 * p["ROWS"]
    ),
    tolerance=lambda dtype: 1e-5,
)
