"""Calibration pair (thirty-fourth held-back set) — primality flags of a batch of integers by trial division
tried with every candidate divisor d < n (the loop bound written as the value itself: "for d in range(2, n)"),
where divisors up to sqrt(n) decide it (a composite n has a factor d <= sqrt(n)). Sources: D. Knuth, The Art of
Computer Programming vol. 2, section 4.5.4 ("Factoring into primes": trial division stops once d > sqrt(n));
R. Crandall and C. Pomerance, "Prime Numbers: A Computational Perspective", section 3.1 (trial division to
sqrt(n)); the CUDA C++ Best Practices Guide ("Arithmetic Instructions": integer division and modulo are costly).

The work: flags [L] int32 (1 prime, 0 composite) of the values n [L] int32, 2 <= n < NMAX, the same in both
versions.

Planted problem (v0): stage "trial_all": one element a lane; for every d in [2, NMAX) the remainder n % d
(a 32-bit integer remainder: ~20 integer instructions), a composite flag set where d < n divides n: NMAX - 2 =
4094 remainders an element.
Fix (v1): stage "trial_sqrt": the same test for d in [2, 64] (d * d <= n < 4096): 63 remainders an element.

Model (the needed work, for both): the 63 remainders and compares an element: FLOPs 0 (integer work), ops 2 x 63
x L; bytes n read and the flag written: 8 L.

Expected on an H100/H200 (per design): L = 65536, NMAX = 4096: v1 ~4-8 us (launch-scale, 0.5 MB); v0 2.7e8
remainders x ~20 integer instructions = 5.4e9 lane-instructions on the integer pipes (64 lanes an SM a clock,
~1.7e13 a second): ~0.35-0.8 ms: ~50-150x. Cause "move_work" (the needed flags by a costlier method: 65x the
divisors that decide them); resource "alu" (the integer remainder sequences).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    n = torch.randint(2, p["NMAX"], (p["L"],), generator=g, dtype=torch.int32)
    return {
        "n": n.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((p["L"],), -1, device=device, dtype=torch.int32),
    }


def _reference(inputs, p):
    import torch

    nmax = p["NMAX"]
    sieve = torch.ones(nmax, dtype=torch.int32)
    sieve[:2] = 0
    for d in range(2, int(nmax**0.5) + 1):
        if sieve[d]:
            sieve[d * d :: d] = 0
    return sieve[inputs["n"].cpu().long()].to(inputs["n"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _ops(p):
    return 0.0


def _bytes(p):
    return 8.0 * p["L"]


KERNEL = KernelPackage(
    name="calib_trial_division",
    description="Calibration (held back, set 34; planted: primality by trial division with every d < n where "
    "d <= sqrt(n) serves): flags of 65536 ints below 4096; v0 4094 remainders an element, v1 63",
    params=(
        Param("L", 65536, min=1, max=1 << 24, doc="values"),
        Param("NMAX", 4096, min=8, max=1 << 15, doc="values lie in [2, NMAX) (a perfect square)"),
        DTYPE_PARAM("int32", choices=("int32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: every divisor d in [2, NMAX) tried (n % d for each)",
            (StageModel("trial_all", flops=_ops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: divisors d <= sqrt(NMAX) only",
            (StageModel("trial_sqrt", flops=_ops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
