"""Calibration pair (twenty-ninth held-back set) — the eigenvalues of many symmetric 3x3 matrices (structure
tensors, inertia or covariance matrices of point neighbourhoods, strain tensors) by the cyclic Jacobi method
run for a fixed number of sweeps (a rotation per off-diagonal entry, each with two divisions, a square root
and a reciprocal square root), where the analytic (trigonometric Cardano) solution of the characteristic cubic
gives the same eigenvalues to the inputs' precision with one arccosine, three cosines and a few square roots.
Sources: Kopp, "Efficient numerical diagonalization of hermitian 3x3 matrices", Int. J. Mod. Phys. C 19
(2008) (dsyevj3 against dsyevc3: the analytic method several times faster, accurate enough unless the
eigenvalues are nearly degenerate); Smith, "Eigenvalues of a symmetric 3x3 matrix", Comm. ACM 4 (1961);
Golub & Van Loan, "Matrix Computations" (4th ed.) 8.5 (the cyclic Jacobi method); the CUDA C++ Programming
Guide "Arithmetic Instructions".

The work: for B = 2^22 symmetric matrices given by their six distinct entries A [6, B] fp16 element-major
(a00, a11, a22, a01, a02, a12), the eigenvalues in ascending order L [3, B] fp32 element-major.

Planted problem (v0): stage "eig3_jacobi": SWEEPS = 8 cyclic sweeps over (0, 1), (0, 2), (1, 2), each
rotation t = sign(th) / (|th| + sqrt(th^2 + 1)) with th = (a_qq - a_pp) / (2 a_pq), c = rsqrt(t^2 + 1),
s = t c and the six entries updated (~25 FP32 and ~4 MUFU instructions a rotation, 24 rotations: ~700
instructions a matrix, unrolled), then the diagonal sorted: compute-bound on the SM's pipes for 36 bytes a
matrix.
Fix (v1): stage "eig3_analytic": q = tr / 3, p = sqrt(sum of squares of (A - q I) / 6), r = det((A - q I) /
p) / 2, phi = acos(clamp(r)) / 3, eigenvalues q + 2 p cos(phi + 2 k pi / 3) (~120 instructions: memory-bound).

Model (the needed work, for both): 60 FLOPs a matrix; bytes: A read and L written once (36 B a matrix).

Expected on an H100/H200 (per design): v1 ~45-60 us (151 MB at ~3-3.5 TB/s); v0 ~200-350 us: ~4-6x. Cause
"move_work" (the needed values by a costlier method: an iterative eigensolver where the closed form serves),
resource None (a rotation's work spreads over the MUFU, the FMA pipes and the issue slots: no single pipe owns
it).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    gen = torch.Generator(device="cpu").manual_seed(0)
    a = torch.randn(6, p["B"], generator=gen)
    a[3:, ::97] = 0.0  # already diagonal (the rotations' zero branch)
    a[:3, 1::89] = 1.0  # a repeated eigenvalue on the diagonal
    a[3:, 1::89] = 0.0
    return {
        "A": a.to(torch.float16).to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((3, p["B"]), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import math

    import torch

    a = inputs["A"].double()
    if not a.is_cuda:  # LAPACK on the CPU (the interpreter's check: small sizes)
        m = torch.stack(
            [
                torch.stack([a[0], a[3], a[4]], -1),
                torch.stack([a[3], a[1], a[5]], -1),
                torch.stack([a[4], a[5], a[2]], -1),
            ],
            -2,
        )
        return torch.linalg.eigvalsh(m).T.float().contiguous()
    # on the GPU (millions of matrices, where the batched solver is slow): the closed form in fp64
    q = (a[0] + a[1] + a[2]) / 3.0
    b0, b1, b2 = a[0] - q, a[1] - q, a[2] - q
    p2 = (b0 * b0 + b1 * b1 + b2 * b2 + 2.0 * (a[3] ** 2 + a[4] ** 2 + a[5] ** 2)) / 6.0
    pp = p2.sqrt()
    det = b0 * (b1 * b2 - a[5] ** 2) - a[3] * (a[3] * b2 - a[5] * a[4]) + a[4] * (a[3] * a[5] - b1 * a[4])
    r = torch.where(pp > 0, det / (2.0 * pp.clamp_min(1e-300) ** 3), torch.zeros_like(pp)).clamp(-1.0, 1.0)
    phi = torch.acos(r) / 3.0
    hi = q + 2.0 * pp * torch.cos(phi)
    lo = q + 2.0 * pp * torch.cos(phi + 2.0 * math.pi / 3.0)
    return torch.stack([lo, 3.0 * q - hi - lo, hi]).float().contiguous()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 60.0 * p["B"]


def _bytes(p):
    return 36.0 * p["B"]


KERNEL = KernelPackage(
    name="calib_eig3_jacobi",
    description="Calibration (held back, set 29; planted: eigenvalues of symmetric 3x3 matrices by 8 cyclic "
    "Jacobi sweeps where the analytic solution of the characteristic cubic serves): 2^22 matrices fp16 "
    "element-major; v0 the Jacobi sweeps, v1 the trigonometric closed form",
    params=(
        Param("B", 1 << 22, min=1, max=1 << 26, doc="matrices in the batch"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: 8 cyclic Jacobi sweeps (24 rotations) then the diagonal sorted",
            (StageModel("eig3_jacobi", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the analytic (trigonometric) roots of the characteristic cubic",
            (StageModel("eig3_analytic", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
