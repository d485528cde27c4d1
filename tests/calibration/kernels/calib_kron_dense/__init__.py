"""Calibration pair (twentieth held-back set) — a Kronecker-factored operator applied as its materialised dense
matrix where the "vec trick" serves: y = (A ⊗ B) x for a batch of vectors x of length n², computed as one GEMM
against K = torch.kron(A, B) (an n² x n² matrix built once, as a Kronecker-factored layer or preconditioner is
often "simplified" into a dense weight), where the identity (A ⊗ B) vec(X) = vec(A X Bᵀ) (row-major vec)
gives the same result with two n x n products per vector. Sources: C. F. Van Loan, "The ubiquitous Kronecker
product" (J. Comput. Appl. Math. 123, 2000: never form A ⊗ B to multiply by it), Golub & Van Loan, "Matrix
Computations" (4th ed., §12.3 "Kronecker Product Computations"), and Martens & Grosse, "Optimizing Neural
Networks with Kronecker-factored Approximate Curvature" (2015: the factors are applied, never the product).

The work: A, B [n, n] fp16 (n = 128), X [batch, n²] fp16 (batch = 64 vectors), out [batch, n²] fp16 = X Kᵀ
= for each vector b: A · X_b · Bᵀ with X_b its [n, n] row-major view. K [n², n²] fp16 = kron(A, B) (512 MB)
is an input (built once, not timed).

Planted problem (v0): stage "dense": a Triton GEMM out = X · Kᵀ (tiles 64 x 64 x 64, 4 warps, 4 stages; a
grid of n²/64 = 256 programs, each streaming 64 rows of K): K's 512 MB read from DRAM for 34 GFLOP of
tensor work (a GEMM with 64 rows: memory-bound).
Fix (v1): stage "vec_trick": per vector and 64-row block of the output, T = A[rows] · X_b (fp32, rounded to
fp16), out = T · Bᵀ: 2 x 2·n³ FLOPs a vector, A, B and X read (~2 MB in all).

Model: dense 2·batch·n⁴ FLOPs, bytes 2·n⁴ (K) + 4·batch·n² (X, out); vec_trick 4·batch·n³ FLOPs, bytes
4·batch·n² + 4·n² (plus A and B re-read from L2 by each program).

Expected on an H100 SXM (per design): v0 ~0.17-0.2 ms (512 MB at ~3 TB/s); v1 ~10-20 µs (128 programs, two
64 x 128 x 128 dots each): ~10-20x. Cause "move_work" (a full algorithm, the n² x n² operator, where the
factored one gives the same result up to rounding), resource "dram" (the bad version's time is the DRAM
stream of K).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    n, b = p["n"], p["batch"]
    g = torch.Generator(device="cpu").manual_seed(0)
    a = (torch.randn(n, n, generator=g) / n**0.5).to(torch.float16)
    bm = (torch.randn(n, n, generator=g) / n**0.5).to(torch.float16)
    x = torch.randn(b, n * n, generator=g).to(torch.float16)
    a, bm = a.to(device), bm.to(device)
    return {
        "A": a,
        "B": bm,
        "X": x.to(device),
        # the materialised operator, as the user's code built it (on the device: 512 MB at the default n)
        "K": torch.kron(a, bm),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((b, n * n), float("nan"), device=device, dtype=torch.float16),
    }


def _reference(inputs, p):
    import torch

    n = p["n"]
    xr = inputs["X"].float().reshape(-1, n, n)
    y = inputs["A"].float() @ xr @ inputs["B"].float().T
    return y.reshape(-1, n * n).to(torch.float16)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _n2(p):
    return float(p["n"]) ** 2


_DENSE = StageModel(
    "dense",
    flops=lambda p: 2.0 * p["batch"] * _n2(p) ** 2,
    bytes=lambda p: 2.0 * _n2(p) ** 2 + 4.0 * p["batch"] * _n2(p),
    tensor_cores=True,
)
_VEC = StageModel(
    "vec_trick",
    flops=lambda p: 4.0 * p["batch"] * float(p["n"]) ** 3,
    bytes=lambda p: 4.0 * p["batch"] * _n2(p) + 4.0 * _n2(p),
    tensor_cores=True,
)

KERNEL = KernelPackage(
    name="calib_kron_dense",
    description="Calibration (held back, set 20; planted: a Kronecker-factored operator applied as its "
    "materialised dense matrix where the vec trick serves): y = (A ⊗ B) x for 64 vectors, n = 128; v0 a "
    "GEMM against kron(A, B) [16384, 16384] fp16; v1 A · X_b · Bᵀ per vector",
    params=(
        Param("n", 128, min=16, max=128, doc="factor size (a power of two, >= 16: the dots' tiles)"),
        Param("batch", 64, min=1, max=4096, doc="vectors"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: out = X · kron(A, B)ᵀ, the n² x n² operator streamed from memory",
            (_DENSE,),
            _build("v0"),
        ),
        Version("v1", "fix: out_b = A · X_b · Bᵀ (the vec trick)", (_VEC,), _build("v1")),
    ),
    memory_bytes=lambda p: 2.0 * _n2(p) ** 2 + 4.0 * p["batch"] * _n2(p) + 4.0 * _n2(p),
    tolerance=lambda dtype: 1e-2,
)
