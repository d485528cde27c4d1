"""A solver step that needs X = A⁻¹B (a Newton or Gauss–Newton step, a Gaussian-process posterior mean,
a Kalman gain, a whitening of a batch of vectors) and computes it as written on paper: the explicit
inverse, ``torch.linalg.inv(A) @ B``. The inverse is an LU factorisation followed by a solve against the
n columns of the identity (two triangular solves with n right-hand sides: three times the LU's own
FLOPs), then a matrix product; the system needs the LU and two triangular solves with B's 64 columns.
The fix is ``torch.linalg.solve(A, B)``: the same X (up to rounding, and more accurately). Sources: the
PyTorch documentation of torch.linalg.inv ("Consider using torch.linalg.solve() if possible for
multiplying a matrix on the left by the inverse ... It is always preferred to use solve() when possible,
as it is faster and more numerically stable than computing the inverse explicitly"); Higham, "Accuracy
and Stability of Numerical Algorithms" (2nd ed., SIAM 2002), ch. 14 (why not to invert); the cuSOLVER
documentation of getrf / getrs.

Stage ``step`` (one ``kprof.range`` per step): A [4096, 4096] fp32 (well-conditioned, from a pool of 4
taken in turn), B [4096, 64] fp32; X = A⁻¹B; X's mean kept. Bad: ``torch.linalg.inv(A) @ B``. Good:
``torch.linalg.solve(A, B)``. Both check the factorisation's status (one synchronisation a step each).

Per design (H100 SXM): LU 2/3·n³ = 46 GFLOP, the inverse's solves against the identity 2·n³ = 137 GFLOP,
the product 2 GFLOP: bad ~185 GFLOP of fp32 SIMT work (no TF32: PyTorch's default), ~4-7 ms a step; good
~48 GFLOP, ~1.5-2.5 ms: ~2.5-3.5x. The extra time is the inverse's triangular solves: the needed result by
a costlier method (cause "move_work"), fp32 FMA work in cuSOLVER / cuBLAS kernels (resource "fma").

    python inverse_then_matmul.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

N, RHS, POOL = 4096, 64, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's mean of X), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    n, rhs = (N, RHS) if cuda else (64, 8)
    g = torch.Generator().manual_seed(0)
    # Well-conditioned systems: 3·I plus a random matrix of spectral radius ~1.
    mats = [(3.0 * torch.eye(n) + torch.randn(n, n, generator=g) / n**0.5).to(dev) for _ in range(POOL)]
    rhss = [torch.randn(n, rhs, generator=g).to(dev) for _ in range(POOL)]
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            k = state["i"] % POOL
            state["i"] += 1
            with kprof.range("step"):
                a, b = mats[k], rhss[k]
                if variant == "bad":  # the planted form: the explicit inverse, then a product
                    x = torch.linalg.inv(a) @ b
                else:  # the fix: one factorisation and two triangular solves with B's columns
                    x = torch.linalg.solve(a, b)
                kept.append(x.mean())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
