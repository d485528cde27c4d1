"""Calibration pair (forty-first held-back set) — the coupling term of the Kuramoto model of N all-to-all
coupled phase oscillators, dtheta_i/dt = omega_i + (K / N) sum_j sin(theta_j - theta_i), summed over all N^2
ordered pairs (a sine of every phase difference), where the mean-field identity serves: sum_j sin(theta_j -
theta_i) = S cos(theta_i) - C sin(theta_i) with S = sum_j sin(theta_j), C = sum_j cos(theta_j) (the order
parameter r e^{i psi} = (1/N) sum_j e^{i theta_j} times N): two sums over the oscillators and one sine and
cosine each, O(N) instead of O(N^2). The direct double sum is the textbook transcription of the model's
equation (``np.sin(theta[None, :] - theta[:, None]).sum(1)``). Sources: Y. Kuramoto, "Chemical Oscillations,
Waves, and Turbulence" (Springer 1984); S. H. Strogatz, "From Kuramoto to Crawford" (Physica D 143, 2000: the
order parameter and the mean-field form of the coupling); J. A. Acebron et al., "The Kuramoto model: a simple
paradigm for synchronization phenomena" (Rev. Mod. Phys. 77, 2005); the CUDA C++ Programming Guide's
arithmetic instruction throughput table and libdevice's sinf (a Cody-Waite reduction, a float-to-int
conversion and two polynomials an argument).

The work: out [N] fp32 = omega + (K / N) * (S cos(theta) - C sin(theta)) for N = 16384 phases theta
(concentrated: 0.9 N(0, 1), the order parameter r ~ 0.67) and natural frequencies omega ~ N(0, 1), K = 2; the
same values to fp32 rounding in both versions.

Planted problem (v0): stage "kuramoto_pairwise": a program a block of 32 oscillators walks all N phases in
blocks of 128: a [32, 128] tile of sin(theta_j - theta_i) (tl.sin: libdevice's sinf, ~25 instructions a pair:
the range reduction, a float-to-int conversion, the polynomial, the large-argument branch's test) added into a
[32, 128] accumulator, reduced along j once after the loop: 2.7e8 sines.
Fix (v1): stage "kuramoto_mean_field": a program a block of 1024 oscillators sums sin and cos of all N phases
(S, C), then out = omega + (K / N) (S cos(theta_i) - C sin(theta_i)): 2N sines and cosines a program.

Model (the needed work, for both): FLOPs ~10 an oscillator (its sine and cosine counted as one operation each,
the two sums' adds, the combination); bytes theta and omega read, out written: 12 N.

Expected on an H100/H200 (per design): v0 2.7e8 pairs x ~25 instructions at 128 lanes a clock an SM (132 SMs,
~1.9 GHz): ~150-250 us, instruction-issue bound (the sine's FMA-pipe work about half of the issued
instructions); v1 16 programs each summing 16384 sines and cosines in 16 steps: ~5-10 us: ~20-40x. Cause
"move_work" (the needed coupling by a costlier method: N^2 sines where 2N serve); resource "issue".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

K_COUPLE = 2.0


def _inputs(p, device):
    import math

    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    n = p["N"]
    theta = (
        torch.remainder(0.9 * torch.randn(n, generator=g, dtype=torch.float64) + math.pi, 2 * math.pi)
        - math.pi
    )
    omega = torch.randn(n, generator=g, dtype=torch.float64)
    return {
        "theta": theta.float().to(device),
        "omega": omega.float().to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((n,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    th = inputs["theta"].double()
    s, c = th.sin().sum(), th.cos().sum()
    out = inputs["omega"].double() + (K_COUPLE / th.numel()) * (s * th.cos() - c * th.sin())
    return out.to(inputs["out"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 10.0 * p["N"]


def _bytes(p):
    return 12.0 * p["N"]


KERNEL = KernelPackage(
    name="calib_kuramoto_pairs",
    description="Calibration (held back, set 41; planted: the Kuramoto coupling summed over all N^2 pairs of "
    "oscillators, a sine of every phase difference, where the mean-field identity's two sums serve): 16384 "
    "oscillators; v0 a [32, 128] tile of sines a step over all phases, v1 S and C summed, then one combination",
    params=(
        Param("N", 16384, min=1, max=1 << 20, doc="oscillators"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: sin(theta_j - theta_i) for every ordered pair, summed over j",
            (StageModel("kuramoto_pairwise", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: S = sum sin(theta_j), C = sum cos(theta_j), then S cos(theta_i) - C sin(theta_i)",
            (StageModel("kuramoto_mean_field", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
