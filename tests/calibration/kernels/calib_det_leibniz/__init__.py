"""Calibration pair (twenty-seventh held-back set) — determinants of a batch of 6x6 matrices computed by the
Leibniz formula written out in full (the 720 signed products of six entries, as a symbolic-algebra tool prints the
expanded determinant, e.g. sympy's ``expand(Matrix(6, 6, symbols).det())`` pasted into a kernel), where Laplace
expansion with every minor computed once (the "minor recurrence": 2x2 minors of the first two rows, then 3x3, ...,
each from the previous level) gives the same value with ~190 multiply-adds instead of ~2,700 (the compiler shares
the terms' common prefixes, leaving ~1,950 multiplications and 719 additions). The same values up to rounding.
Sources: Golub & Van Loan, "Matrix Computations" (4th ed.) 2.1.9/3.2 (the determinant's n! definition is never
how it is computed), Knuth TAOCP vol. 2, 4.6.4 (evaluating a polynomial with fewer operations by sharing
subexpressions); the CUDA C++ Programming Guide, "Arithmetic Instructions" (128 FP32 results per clock per SM:
a kernel whose work is thousands of FP32 operations per 72 bytes loaded is bound by the FMA pipes).

The work: out [B] fp32 = det(A_b) for B = 2^22 matrices of 6x6 fp16 stored element-major (A [36, B]: element
(r, c) of matrix b at A[6 r + c, b], every load coalesced), computed in fp32.

Planted problem (v0): stage "det_leibniz": 36 loads and the 720-term sum: ~2,700 FP32 instructions a matrix
(~1.1e10 for 2^22; FMUL/FFMA/FADD on the FMA pipes), for 76 bytes of memory traffic a matrix.
Fix (v1): stage "det_minors": the same loads and ~190 FP32 multiply-adds (15 + 20 + 15 + 6 minors, then the last
row): memory-bound.

Model: ~190 FP32 operations a matrix (the cheaper method's work; the needed work); bytes: A read and out
written once (76 B a matrix), for both.

Expected on an H100/H200 (per design): v1 ~70-90 us (320 MB at ~3.5-4.5 TB/s); v0 ~300-350 us (1.1e10 FP32
instructions at 128 a clock per SM on 132 SMs at ~1.9 GHz): ~3.5-5x. Cause "move_work" (the needed value computed
by a costlier method than a legal alternative: the n! expansion where the minor recurrence serves), resource
"fma" (where the bad version's work runs).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    gen = torch.Generator(device="cpu").manual_seed(0)
    a = torch.randn(36, p["B"], generator=gen).to(torch.float16)
    return {
        "A": a.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((p["B"],), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    a = inputs["A"].double().reshape(6, 6, p["B"]).permute(2, 0, 1)
    return torch.linalg.det(a).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 190.0 * p["B"]


def _bytes(p):
    return 76.0 * p["B"]


KERNEL = KernelPackage(
    name="calib_det_leibniz",
    description="Calibration (held back, set 27; planted: 6x6 determinants by the 720-term Leibniz sum where the "
    "minor recurrence serves): out = det(A_b) for 2^22 matrices of 6x6 fp16 stored element-major; v0 the Leibniz "
    "formula written out, v1 Laplace expansion with every minor computed once",
    params=(
        Param("B", 1 << 22, min=1, max=1 << 26, doc="matrices in the batch"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the 720-term Leibniz sum written out",
            (StageModel("det_leibniz", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: Laplace expansion with every minor computed once",
            (StageModel("det_minors", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
