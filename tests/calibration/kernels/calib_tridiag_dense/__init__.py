"""Calibration pair (thirty-first held-back set) — a batch of tridiagonal linear systems (e.g. the implicit step
of a 1-D diffusion / Crank-Nicolson scheme per grid line, or cubic-spline fits, one system per line) solved as
dense systems: each system's three diagonals assembled into a dense 32 x 32 matrix and solved by Gauss-Jordan
elimination (what ``torch.linalg.solve(torch.diag_embed(b) + torch.diag_embed(a[1:], -1) + torch.diag_embed(c[:-1],
1), d)`` does through a dense LU), where the Thomas algorithm (one forward sweep and one back substitution over
the three diagonals, O(n) work) gives the same solution. Sources: L. H. Thomas (1949) / W. H. Press et al.,
"Numerical Recipes" (section 2.4, ``tridag``: O(n) operations against O(n^3) for a dense solver); G. H. Golub and
C. F. Van Loan, "Matrix Computations" (4.3, band LU: a tridiagonal LU costs O(n) flops); the cuSPARSE
documentation (``gtsv2`` and ``gtsvInterleavedBatch``: batched tridiagonal solvers, the interleaved layout
[n, batch] used here); the CUDA C++ Best Practices Guide ("Arithmetic Instructions": the cheapest method for the
needed result).

The work: B = 65536 diagonally dominant tridiagonal systems of order n = 32, fp32, stored interleaved [n, B]
(row i of every system contiguous): sub-diagonal A (A[0] unused), diagonal D, super-diagonal C (C[n - 1] unused),
right-hand side R; the solution X [n, B] fp32.

Planted problem (v0): stage "tridiag_dense_gj": one program a system (4 warps): the three diagonals loaded and
the dense [32, 32] matrix assembled in registers (zeros off the band), then 32 Gauss-Jordan steps, each
extracting the pivot row and column by masked sums over the whole [32, 32] tile (cross-thread reductions) and
updating all 1024 entries and the right-hand side; X = R / diag: ~32 x 5 x 1024 operations a system plus 64
block reductions (~160,000 against ~300 for Thomas).
Fix (v1): stage "tridiag_thomas": one system a lane (128 a program): the forward sweep c'_i = C_i / (D_i - A_i
c'_{i-1}), d'_i = (R_i - A_i d'_{i-1}) / (D_i - A_i c'_{i-1}) (c' kept in the scratch W, d' in X), then the back
substitution x_i = d'_i - c'_i x_{i+1}, unrolled over the 32 rows, every access coalesced across the systems:
memory-bound.

Model (the needed work, for both): FLOPs ~8 a row (the two sweeps): 8 n B; bytes: the four inputs read and X
written once: 20 B a row, 20 n B (the scratch round trip of c' is the method's own).

Expected on an H100/H200 (per design): v1 ~20-35 us (42 MB needed, plus the scratch: ~75 MB at ~3-4 TB/s); v0
~5e9 operations and 4.2e6 block reductions with barriers over 65536 programs: ~0.5-2 ms: far above 3x (~20-60x).
Cause "move_work" (the needed solution by a costlier method: dense O(n^3) elimination where O(n) Thomas serves);
resource None (the elimination's selects, adds and multiply-adds, the reductions' shuffles, shared-memory round
trips and barriers: no one pipe owns it).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

NROW = 32  # the order of every system


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    b, n = p["B"], NROW
    sub = torch.rand((n, b), generator=g) * 2.0 - 1.0
    sup = torch.rand((n, b), generator=g) * 2.0 - 1.0
    sub[0] = 0.0  # unused: no row before the first
    sup[n - 1] = 0.0  # unused: no row after the last
    diag = 3.0 + torch.rand((n, b), generator=g)  # |D| > |A| + |C|: diagonally dominant, no pivoting needed
    rhs = torch.randn((n, b), generator=g)
    return {
        "A": sub.to(device),
        "D": diag.to(device),
        "C": sup.to(device),
        "R": rhs.to(device),
        "W": torch.zeros((n, b), device=device),  # scratch of the Thomas sweep (c')
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((n, b), float("nan"), device=device),
    }


def _reference(inputs, p):
    import torch

    a, d, c, r = (inputs[k].cpu().double() for k in ("A", "D", "C", "R"))
    n = NROW
    cp = torch.zeros_like(d)
    dp = torch.zeros_like(d)
    cp[0] = c[0] / d[0]
    dp[0] = r[0] / d[0]
    for i in range(1, n):
        m = d[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / m
        dp[i] = (r[i] - a[i] * dp[i - 1]) / m
    x = torch.zeros_like(d)
    x[n - 1] = dp[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x.float().to(inputs["R"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 8.0 * NROW * p["B"]


def _bytes(p):
    return 20.0 * NROW * p["B"]


KERNEL = KernelPackage(
    name="calib_tridiag_dense",
    description="Calibration (held back, set 31; planted: tridiagonal systems solved by dense Gauss-Jordan "
    "elimination where the Thomas algorithm serves): 65536 systems of order 32, fp32, interleaved; v0 the dense "
    "[32, 32] matrix eliminated in registers, v1 the Thomas sweeps a lane a system",
    params=(
        Param("B", 1 << 16, min=1, max=1 << 22, doc="systems"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: each system assembled as a dense 32 x 32 matrix and solved by Gauss-Jordan elimination",
            (StageModel("tridiag_dense_gj", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the Thomas algorithm (forward sweep, back substitution) a lane a system",
            (StageModel("tridiag_thomas", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
