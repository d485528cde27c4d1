"""Calibration pair (thirty-second held-back set) — a propagation step y = A x (a PageRank or graph-diffusion
iteration, a pruned layer's matrix-vector product) whose matrix has 64 nonzeros a row out of 16384 (0.4 % dense)
applied as a dense fp16 matrix (the zeros read from DRAM with the rest), where its ELL form (the nonzeros' values
and column indices, a fixed count a row) gives the same product. Sources: the cuSPARSE documentation (sparse
matrix-vector products, the ELL/blocked-ELL and CSR formats); N. Bell and M. Garland, "Implementing sparse
matrix-vector multiplication on throughput-oriented processors" (SC 2009: ELL's coalesced column-major layout);
L. Page et al., "The PageRank citation ranking" (1999: the power iteration over a sparse link matrix); the CUDA C++
Best Practices Guide ("Memory Optimizations": minimise the bytes moved from device memory).

The work: y [R] fp32 = A x, A [R, C] with K = 64 nonzeros a row (fp16 values, sorted distinct columns), x [C]
fp16, the same in both versions.

Planted problem (v0): stage "gemv_dense": the dense A [16384, 16384] fp16 (512 MiB, 99.6 % zeros) streamed, 8
rows a program (2048 programs), 1024 columns at a time, products accumulated in fp32: 2 bytes read for every entry.
Fix (v1): stage "spmv_ell": the ELL arrays (values fp16 and column indices int32, [K, R] column-major: coalesced
across rows), 64 rows a program, all K nonzeros of its rows loaded at once, x gathered (32 KiB: cached): 6 bytes a
nonzero.

Model (the needed work, for both): FLOPs 2 R K; bytes the nonzeros' values and indices (6 R K), x (2 C), y (4 R).

Expected on an H100/H200 (per design): v0 ~120-180 us (537 MB at ~3-4.5 TB/s); v1 ~5-12 us (6.3 MB and x
from L2, a launch's worth): ~10-30x. Cause "over_fetch" (the zeros of the matrix read from DRAM: bytes the result
does not need); resource "dram".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _ell(r, c, k):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    step = c // k
    cols = torch.arange(k)[None, :] * step + torch.randint(0, step, (r, k), generator=g)  # sorted, distinct
    vals = (torch.rand(r, k, generator=g) * 2.0 - 1.0).half()
    x = (torch.rand(c, generator=g) * 2.0 - 1.0).half()
    return cols.int(), vals, x


def _inputs(p, device):
    import torch

    r, c, k = p["R"], p["C"], p["K"]
    cols, vals, x = _ell(r, c, k)
    cols, vals = cols.to(device), vals.to(device)
    a = torch.zeros(r, c, dtype=torch.float16, device=device)
    a.scatter_(1, cols.long(), vals)
    return {
        "A": a,
        "cols_t": cols.t().contiguous(),  # [K, R]: column-major ELL
        "vals_t": vals.t().contiguous(),
        "x": x.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((r,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    cols = inputs["cols_t"].t().long()
    vals = inputs["vals_t"].t().double()
    x = inputs["x"].double()
    return (vals * x[cols]).sum(dim=1).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * p["R"] * p["K"]


def _bytes(p):
    return 6.0 * p["R"] * p["K"] + 2.0 * p["C"] + 4.0 * p["R"]


KERNEL = KernelPackage(
    name="calib_sparse_as_dense",
    description="Calibration (held back, set 32; planted: a 0.4 %-dense matrix applied as a dense fp16 matrix "
    "where its ELL form serves): y = A x, A [16384, 16384] with 64 nonzeros a row; v0 the dense GEMV, v1 the "
    "ELL product",
    params=(
        Param("R", 16384, min=1, max=1 << 20, doc="rows"),
        Param("C", 16384, min=1024, max=1 << 20, doc="columns (a multiple of 1024)"),
        Param("K", 64, min=1, max=256, doc="nonzeros a row (a power of two, C a multiple of K)"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the dense matrix streamed, zeros and all",
            (StageModel("gemv_dense", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the ELL values and column indices, x gathered",
            (StageModel("spmv_ell", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-5,
)
