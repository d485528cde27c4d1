"""Calibration pair (twenty-sixth held-back set) — the standard normal CDF Phi(x) of every element computed by
numerically integrating the Gaussian density (composite Simpson's rule, 64 intervals over [0, |x|], one exponential
a node) where the closed form through the error function serves: Phi(x) = (1 + erf(x / sqrt 2)) / 2, erf being
a library function of a few dozen FMAs (a rational / polynomial approximation, no loop). Code written from a
textbook definition of the CDF as an integral (or ported from a setting without erf) does 65 exponentials an
element on the special-function units. The same values to ~1e-6. Sources: Abramowitz & Stegun 7.1 and 26.2.2
(Phi through erf) and 25.4.5 (Simpson's rule); Numerical Recipes (3rd ed.) 6.2 ("incomplete gamma function,
error function ... do not integrate numerically what has a fast series or rational approximation"); the CUDA
C++ Programming Guide, "Arithmetic Instructions" (throughput table: 16 special-function results per clock per
SM against 128 FP32 FMAs) and its Mathematical Functions appendix (erff, normcdff).

The work: out [N] fp32 = Phi(X) for X [2^24] fp32.

Planted problem (v0): stage "cdf_simpson": per element h = |x| / 64, the density exp2(-t^2 log2(e) / 2) at the
65 Simpson nodes t = i h (64 loop exponentials, MUFU.EX2) weighted 1, 4, 2, ..., 4, 1, then 1/2 +- h / 3 / sqrt(2 pi)
times the sum: ~65 special-function operations an element (~1.1e9 for 2^24 elements).
Fix (v1): stage "cdf_erf": (1 + erf(x / sqrt 2)) / 2 (libdevice's erff, FMA work only): memory-bound.

Model: ~25 FP32 operations an element (the erf approximation); bytes: X read and out written once (8 N), for both.

Expected on an H100/H200 (per design): v0 ~0.26-0.3 ms (1.1e9 exponentials at 16 a clock per SM on 132 SMs),
v1 ~0.04 ms (134 MB at ~3.5-4 TB/s): ~6-8x. Cause "move_work" (the needed values computed by a costlier
method than a legal alternative: quadrature where the closed form serves), resource "xu" (where the bad
version's work runs: the special-function units' exponentials).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    gen = torch.Generator(device="cpu").manual_seed(0)
    x = 1.5 * torch.randn(p["N"], generator=gen, dtype=torch.float32)
    return {
        "X": x.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((p["N"],), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    x = inputs["X"].double()
    return (0.5 * (1.0 + x.div(2.0**0.5).erf())).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 25.0 * p["N"]


def _bytes(p):
    return 8.0 * p["N"]


KERNEL = KernelPackage(
    name="calib_cdf_quadrature",
    description="Calibration (held back, set 26; planted: the normal CDF integrated by Simpson's rule, 65 "
    "exponentials an element, where erf serves): out = Phi(X) for X [2^24] fp32; v0 Simpson's rule over [0, |x|] "
    "in 64 intervals, v1 (1 + erf(x / sqrt 2)) / 2",
    params=(
        Param("N", 1 << 24, min=1, max=1 << 30, doc="elements of X"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: Simpson's rule over the density, 65 exponentials an element",
            (StageModel("cdf_simpson", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the closed form through erf",
            (StageModel("cdf_erf", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
