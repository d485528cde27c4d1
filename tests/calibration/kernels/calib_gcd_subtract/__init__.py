"""Calibration pair (thirty-fifth held-back set) — greatest common divisors of a batch of integer pairs by
Euclid's subtraction form (the larger less the smaller until the two agree: "while a != b: if a > b: a -= b
else: b -= a", written to avoid the costly integer remainder), where the remainder form (a, b) -> (b, a mod b)
serves: the subtraction form takes up to max(a, b) - 1 steps a pair (gcd(a, 1)), the remainder form at most
the Lamé bound (17 steps for values below 4096). A branch-free Triton kernel runs a data-independent loop, so
each version loops to its form's worst case. Sources: D. Knuth, The Art of Computer Programming vol. 2,
section 4.5.2 (Euclid's algorithm, Lamé's theorem on its step count, the subtractive variant's worst case);
Euclid, Elements VII.2; the CUDA C++ Best Practices Guide ("Arithmetic Instructions": integer division and
modulo are costly — the advice this kernel over-applies).

The work: g [L] int32 = gcd(a, b) of the pairs a, b [L] int32, 1 <= a, b < NMAX, the same in both versions.

Planted problem (v0): stage "gcd_subtract": one pair a lane; NMAX - 2 = 4094 steps of the subtraction form
(two compares, two subtractions, two selects: ~6 integer instructions a step, ~25000 a pair).
Fix (v1): stage "gcd_remainder": 18 steps of the remainder form (a guarded 32-bit remainder, ~25 integer
instructions a step: ~450 a pair).

Model (the needed work, for both): the remainder form's 18 steps a pair: FLOPs 0 (integer work); bytes a, b
read and g written: 12 L.

Expected on an H100/H200 (per design): L = 131072, NMAX = 4096: v0 131072 x 4094 x ~6 = 3.2e9 lane-instructions
on the integer pipes (~1.7e13 a second): ~0.2-0.4 ms; v1 131072 x 18 x ~25 = 5.9e7: ~5-8 us (launch-scale):
~30-60x. Cause "move_work" (the needed divisors by a costlier method: ~55x the instructions that decide them);
resource "alu" (the integer compare, subtract and select chain).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    a = torch.randint(1, p["NMAX"], (p["L"],), generator=g, dtype=torch.int32)
    b = torch.randint(1, p["NMAX"], (p["L"],), generator=g, dtype=torch.int32)
    b[::7] = 1  # the subtraction form's worst case (a - 1 steps) in every warp
    return {
        "a": a.to(device),
        "b": b.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((p["L"],), -1, device=device, dtype=torch.int32),
    }


def _reference(inputs, p):
    import torch

    a, b = inputs["a"].cpu(), inputs["b"].cpu()
    return torch.gcd(a, b).to(inputs["a"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _ops(p):
    return 0.0


def _bytes(p):
    return 12.0 * p["L"]


KERNEL = KernelPackage(
    name="calib_gcd_subtract",
    description="Calibration (held back, set 35; planted: gcd by Euclid's subtraction form where the remainder "
    "form serves): gcds of 131072 pairs below 4096; v0 4094 subtraction steps a pair, v1 18 remainder steps",
    params=(
        Param("L", 131072, min=1, max=1 << 24, doc="pairs"),
        Param("NMAX", 4096, min=8, max=1 << 15, doc="values lie in [1, NMAX)"),
        DTYPE_PARAM("int32", choices=("int32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: Euclid's subtraction form, NMAX - 2 steps (its worst case) a pair",
            (StageModel("gcd_subtract", flops=_ops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the remainder form, the Lamé bound's steps a pair",
            (StageModel("gcd_remainder", flops=_ops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
