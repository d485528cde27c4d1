"""Calibration pair (nineteenth held-back set) — a polynomial evaluated term by term with each power of x
computed from scratch where Horner's rule serves: ``p(x) = c0 + c1·x + c2·x·x + c3·x·x·x + ...``, each
``x**k`` formed by its own k - 1 multiplications (the textbook's "never evaluate a polynomial this way"),
so a degree-D polynomial costs D(D+1)/2 multiplications an element where Horner's rule
``(((cD·x + cD-1)·x + ...)·x + c0`` costs D fused multiply-adds. Sources: Press, Teukolsky, Vetterling &
Flannery, "Numerical Recipes" (3rd ed., §5.1 "Polynomials and Rational Functions": "We assume that you know
enough never to evaluate a polynomial this way"), Knuth, TAOCP vol. 2 §4.6.4 (Horner's rule), and the CUDA
C++ Best Practices Guide ("Arithmetic Instructions": the FP32 pipes' throughput bounds compute-heavy
kernels).

The work: x [N] fp32 (N = 2^25, uniform in [-1, 1]), coefficients c [D + 1] fp32 (D = 24, c_k = (-1)^k
/ (k + 1): a truncated series), out [N] fp32 = p(x). The degree is a runtime argument (as a polynomial
approximation's degree read from its coefficient table), so the loops are not unrolled.

Planted problem (v0): stage "powers": one program per 1024 elements (4 warps); for k = 1..D an inner loop
of k multiplications forms x**k, then acc += c_k · x**k: D(D+1)/2 = 300 FP32 multiplications and 24 FMAs
an element (~10.9 G lane operations at the default size), the FMA pipes busy with them.
Fix (v1): stage "horner": the same programs, acc = acc·x + c_k for k = D..0: 25 FMAs an element.

Model: powers D(D+1)/2 + 2D FLOPs an element, horner 2(D + 1); bytes 8 an element (x read, out written)
for both.

Expected on an H100 SXM (per design): v1 is memory-bound (268 MB at ~3 TB/s: ~0.09 ms); v0 ~10.9 G FP32
lane operations at ~33 T a second (128 lanes a clock on 132 SMs at ~1.98 GHz) plus the inner loop's
counter and branch: ~0.35-0.5 ms: ~4-5x. Cause "move_work" (the same polynomial by a costlier method:
O(D^2) multiplications where O(D) FMAs serve), resource "fma".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    n, d = p["N"], p["D"]
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.rand(n, generator=g) * 2.0 - 1.0
    k = torch.arange(d + 1, dtype=torch.float64)
    c = ((-1.0) ** k / (k + 1.0)).to(torch.float32)
    return {
        "x": x.to(device),
        "c": c.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((n,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    x = inputs["x"].double()
    c = inputs["c"].double()
    acc = c[p["D"]].expand_as(x).clone()
    for k in range(p["D"] - 1, -1, -1):
        acc = acc * x + c[k]
    return acc.to(inputs["x"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _n(p):
    return float(p["N"])


_POWERS = StageModel(
    "powers",
    flops=lambda p: _n(p) * (p["D"] * (p["D"] + 1) / 2.0 + 2.0 * p["D"]),
    bytes=lambda p: 8.0 * _n(p),
)
_HORNER = StageModel("horner", flops=lambda p: _n(p) * 2.0 * (p["D"] + 1), bytes=lambda p: 8.0 * _n(p))

KERNEL = KernelPackage(
    name="calib_poly_powers",
    description="Calibration (held back, set 19; planted: a polynomial evaluated with each power of x "
    "computed from scratch where Horner's rule serves): p(x) of degree 24 over 2^25 fp32 elements; v0 "
    "x**k by k multiplications for every term; v1 Horner's rule",
    params=(
        Param("N", 1 << 25, min=1, max=1 << 30, doc="elements"),
        Param("D", 24, min=0, max=256, doc="degree of the polynomial"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: each term's power x**k formed by its own k multiplications (D(D+1)/2 an element)",
            (_POWERS,),
            _build("v0"),
        ),
        Version("v1", "fix: Horner's rule (D + 1 FMAs an element)", (_HORNER,), _build("v1")),
    ),
    memory_bytes=lambda p: 8.0 * _n(p) + 4.0 * (p["D"] + 1),
    tolerance=lambda dtype: 1e-5,
)
