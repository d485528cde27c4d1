"""Calibration pair (thirteenth held-back set) — a root found by bisection where Newton's method converges in a
few steps: Kepler's equation E - e sin E = M solved for the eccentric anomaly E of 2^24 orbits (the inner loop
of orbit propagation and of radial-velocity / transit model fitting), by bisection on the bracket
[M - e, M + e] for a fixed 48 halvings (one bit of E a step, "48 to be safe"), where Newton's iteration from
Danby's starting value converges quadratically: 6 steps reach fp32 precision for e <= 0.8. Sources: Press et
al., Numerical Recipes (3rd ed.), §9.1 (bisection: the bracket halves each step, linear convergence) and §9.4
(Newton-Raphson: the number of correct digits doubles each step); J. M. A. Danby, "Fundamentals of Celestial
Mechanics" (1988), §6.6 (the starter E0 = M + 0.85 e sign(sin M)).

The work: M uniform in [0, 2 pi), e uniform in [0, 0.8] (fp32, or fp16 inputs), E fp32. One program per
BLOCK = 1024 orbits, 4 warps; no memory traffic beyond reading M and e and writing E (12 bytes an orbit).

Planted problem (v0): 48 bisection steps, each one sin (libdevice's sinf: a range reduction and a
polynomial on the FMA pipe) and a handful of FP32 operations: ~48 x ~30 instructions an orbit.
Fix (v1): Danby's start (one sin) and 6 Newton steps E -= (E - e sin E - M) / (1 - e cos E): a sin, a cos
and a division each: ~6 x ~60 instructions an orbit. The same root to fp32 precision.

Model: FLOPs counted as the fix's useful work, 6 Newton steps of ~10 FP32 operations besides the sine and
cosine (~40 each): 2^24 x 6 x 90 ≈ 9e9 (the same for both versions: the model is of the work the answer
needs); bytes 12 an orbit (M, e read, E written at fp32).

Expected on an H100 SXM (per design): v0 ~2^24 x 48 x ~30 = 2.4e10 lane instructions, mostly FP32 FMA-pipe work
(the sine's polynomial and range reduction): ~0.8 ms at ~30 T lane-instructions/s; v1 ~6e9: ~0.2 ms; DRAM
~0.2 GB (~70 µs) in both: ~3-5x. Cause "move_work" (the same root by a cheaper method: quadratic instead
of linear convergence); resource "fma" (the FP32 pipe runs the sines now).
Tolerance: fp32 roots of a well-conditioned equation (1 - e cos E >= 0.2): 2e-6 relative (norm).
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import math

    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    n = p["N"]
    dt = getattr(torch, p["dtype"])
    return {
        "M": (torch.rand(n, generator=g) * (2 * math.pi)).to(device=device, dtype=dt),
        "e": (torch.rand(n, generator=g) * 0.8).to(device=device, dtype=dt),
        # Poisoned output: a version that does not write every root fails the check.
        "out": torch.full((n,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    m, e = inputs["M"].double(), inputs["e"].double()
    E = m + 0.85 * e * torch.sign(torch.sin(m))
    for _ in range(30):  # fp64 Newton, far past convergence
        E = E - (E - e * torch.sin(E) - m) / (1 - e * torch.cos(E))
    return E.float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


_STAGE = StageModel(
    "kepler", flops=lambda p: 540.0 * p["N"], bytes=lambda p: float(p["N"] * (2 * p.itemsize + 4))
)

KERNEL = KernelPackage(
    name="calib_kepler_bisect",
    description="Calibration (held back, set 13; planted: a root found by bisection where Newton converges in a "
    "few steps): Kepler's equation E - e sin E = M for 2^24 orbits; v0 48 bisection steps, v1 Danby's start and "
    "6 Newton steps",
    params=(
        Param("N", 1 << 24, min=1, max=1 << 28, doc="orbits"),
        Param("dtype", "float32", choices=("float32", "float16"), doc="M and e dtype (E is float32)"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: 48 bisection steps on [M - e, M + e]", (_STAGE,), _build("v0")),
        Version("v1", "fix: Danby's starting value and 6 Newton steps", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: float(p["N"] * (2 * p.itemsize + 4)),
    tolerance=lambda dtype: 2e-6,
)
