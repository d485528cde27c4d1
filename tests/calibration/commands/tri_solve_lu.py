"""Triangular systems solved with the general solver, ``torch.linalg.solve(L, X)`` (a pivoted LU factorisation
of a matrix that is already triangular, then its two triangular solves, and a host wait for the factorisation's
error check), where ``torch.linalg.solve_triangular(L, X, upper=False)`` (one triangular solve) serves. The
pattern of Gaussian-process and whitening code that has a Cholesky factor L and applies L^-1 with the general
solve. Sources: the torch.linalg documentation (linalg.solve: "computes the LU decomposition"; solve_triangular
for triangular systems; linalg.solve synchronises for its error check); G. H. Golub and C. F. Van Loan, "Matrix
Computations" (4th ed., 3.1 and 3.2: forward substitution n^2 a column against LU's 2n^3/3); C. E. Rasmussen
and C. K. I. Williams, "Gaussian Processes for Machine Learning" (2006, Algorithm 2.1: L \\ y by triangular
solves).

Stage ``step`` (one ``kprof.range`` per step, inference): a batch of 256 fixed lower-triangular factors L
[256, 128, 128] fp32 (a positive diagonal in [1, 2], small entries below it) applied to right-hand sides X
[256, 128, 64] (two, alternating): Z = L^-1 X; two values of Z kept. Bad: torch.linalg.solve (cuBLAS batched
LU with pivoting, the permutation and two batched triangular solves, a host wait for the factorisation's info).
Good: torch.linalg.solve_triangular (one batched triangular solve). The same Z to fp32 rounding (partial pivoting
of a triangular matrix with a dominant diagonal picks no row exchange).

Model (the needed work): a forward substitution, n^2 nrhs FLOPs a system: 256 x 128^2 x 64 = 2.7e8 a step;
bytes L read (16.8 MB), X read and Z written (2 x 8.4 MB): ~3.4e7.

Per design (H100/H200): the good step ~0.08-0.2 ms (one batched TRSM); the bad adds the batched LU of 256
matrices of 128 x 128 (~3.6e8 FLOPs in small dependent panel steps, cuBLAS getrfBatched) and a second
triangular solve: ~0.6-1.2 ms a step: ~4-8x. The extra time is the solve computed by a costlier method (a
factorisation of a matrix already factorised; cause "move_work"; resource None: the batched LU's panel steps
are latency-bound small kernels, no one pipe or memory level saturated).

    python tri_solve_lu.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

B, N, R, NX = 256, 128, 64, 2


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (two values of Z a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, n, r = (B, N, R) if cuda else (3, 8, 2)
    g = torch.Generator(device=dev).manual_seed(0)
    low = torch.randn(b, n, n, generator=g, device=dev).tril(-1) * (0.5 / n**0.5)
    diag = 1.0 + torch.rand(b, n, generator=g, device=dev)
    lf = low + torch.diag_embed(diag)
    xs = [torch.randn(b, n, r, generator=g, device=dev) for _ in range(NX)]
    kept: list = []
    it = [0]

    if variant == "bad":

        def whiten(x):
            return torch.linalg.solve(lf, x)  # LU of the triangular L, two triangular solves, a host wait

    else:

        def whiten(x):
            return torch.linalg.solve_triangular(lf, x, upper=False)

    def step():
        z = whiten(xs[it[0] % NX])
        it[0] += 1
        return z[0, -1, :2]

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(step())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
