"""Calibration pair (twenty-eighth held-back set) — a constant-coefficient 5-point Laplacian (the operator of a
Poisson or heat-equation solver's every iteration) applied through its assembled sparse matrix, stored in ELL
format (five fp32 values and five int32 column indices a row, the padding entries zero-valued), where the
matrix-free stencil, y = 4 x[i, j] - x[i-1, j] - x[i+1, j] - x[i, j-1] - x[i, j+1], gives the same result
from x alone: each output reads 40 bytes of matrix (values and indices) beside the 4 bytes of x it needs. The
same outputs (the same products in the same order). Sources: Bell & Garland, "Efficient Sparse Matrix-Vector
Multiplication on CUDA" (NVIDIA Technical Report NVR-2008-004) (the ELL format; SpMV bound by the matrix's
bytes); Kronbichler & Kormann, "A generic interface for parallel cell-based finite element operator
application" (Computers & Fluids 63, 2012) (matrix-free operator evaluation in place of an assembled matrix);
the CUDA C++ Best Practices Guide ("Minimize data transfer": bytes between global memory and the SMs).

The work: y [H * W] fp32 = A x for x [H * W] fp32 on an H x W = 4096 x 4096 grid (row-major), A the 5-point
Laplacian with zero (Dirichlet) values outside the grid.

Planted problem (v0): stage "laplace_ell": vals [5, N] fp32 and cols [5, N] int32 (assembled once, outside the
timed step), y[i] = sum_k vals[k, i] * x[cols[k, i]]: 40 B of matrix, 4 B of x (its neighbours hit in L1/L2) and
4 B of y an output: ~805 MB a product for N = 2^24.
Fix (v1): stage "laplace_stencil": the same sums from x's five neighbours (masked at the grid's edges): 8 B an
output, ~134 MB.

Model (the needed work, for both): 9 FLOPs an output (5 multiplies, 4 adds); bytes: x read and y written once
(8 B an output).

Expected on an H100/H200 (per design): v1 ~40-50 us; v0 ~220-260 us (805 MB at ~3.3-3.7 TB/s): ~4.5-5.5x.
Cause "over_fetch" (bytes moved at DRAM beyond what the result needs: the assembled matrix's values and
indices), resource "dram".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    h, w = p["H"], p["W"]
    n = h * w
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(n, generator=gen)
    idx = torch.arange(n)
    r, c = idx // w, idx % w
    # ELL rows: centre, north, south, west, east; a missing neighbour is a zero value at the row's own column
    nbr = [idx, idx - w, idx + w, idx - 1, idx + 1]
    ok = [torch.ones(n, dtype=torch.bool), r > 0, r < h - 1, c > 0, c < w - 1]
    coef = [4.0, -1.0, -1.0, -1.0, -1.0]
    cols = torch.stack([torch.where(o, j, idx) for j, o in zip(nbr, ok)]).to(torch.int32)
    vals = torch.stack([torch.where(o, torch.tensor(v), torch.tensor(0.0)) for v, o in zip(coef, ok)])
    return {
        "X": x.to(device),
        "VALS": vals.float().contiguous().to(device),
        "COLS": cols.contiguous().to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((n,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    h, w = p["H"], p["W"]
    x = torch.nn.functional.pad(inputs["X"].double().reshape(h, w), (1, 1, 1, 1))
    y = 4.0 * x[1:-1, 1:-1] - x[:-2, 1:-1] - x[2:, 1:-1] - x[1:-1, :-2] - x[1:-1, 2:]
    return y.reshape(-1).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 9.0 * p["H"] * p["W"]


def _bytes(p):
    return 8.0 * p["H"] * p["W"]


KERNEL = KernelPackage(
    name="calib_stencil_assembled",
    description="Calibration (held back, set 28; planted: a constant-coefficient 5-point Laplacian applied "
    "through its assembled ELL sparse matrix where the matrix-free stencil serves): y = A x on a 4096 x 4096 "
    "fp32 grid; v0 the ELL product (values and column indices read), v1 the stencil from x alone",
    params=(
        Param("H", 4096, min=1, max=1 << 15, doc="grid rows"),
        Param("W", 4096, min=1, max=1 << 15, doc="grid columns"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the Laplacian applied through its assembled ELL matrix",
            (StageModel("laplace_ell", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the matrix-free 5-point stencil",
            (StageModel("laplace_stencil", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-5,
)
