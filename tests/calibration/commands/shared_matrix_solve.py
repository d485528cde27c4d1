"""Many right-hand sides of one linear system solved with the system's matrix broadcast to the batch
(``torch.linalg.solve(A.expand(R, n, n), b)``, written to give A the batch dimension of b: R LU factorisations
of the same matrix, a batched LU and R one-column solves), where one factorisation and one solve with the R
right-hand sides as columns serves (``torch.linalg.solve(A, b.T).T``). Sources: G. H. Golub, C. F. Van Loan,
"Matrix Computations" (3.1-3.2: factor once, then solve for each right-hand side at O(n^2) each); the PyTorch
torch.linalg.lu_factor documentation (factor once and reuse it with lu_solve for several systems with the same
matrix); LAPACK's gesv (one factorisation, NRHS columns).

Stage ``step`` (one ``kprof.range`` per step): a damped system (A0 + lambda_t I) x = b for R = 512 right-hand
sides b [512, 128] fp32 (one of four in turn; lambda_t from the step: the matrix changes every step, its
factorisation is needed once a step), n = 128; two values of the solution kept a step. Bad: the matrix expanded
to [512, 128, 128] (R factorisations: 512 x 2/3 n^3 = 7.2e8 FLOPs in a batched LU, then 512 one-column
solves). Good: one LU of the 128 x 128 matrix (1.4e6 FLOPs) and one solve with 512 columns (1.7e7). The same
solutions up to rounding (the same pivoting on the same matrix).

Model (the needed work): FLOPs one LU and the triangular solves: ~1.8e7 a step; bytes A, b and x: ~5.9e5.

Per design (H100/H200): the good step ~60-150 us (a small LU's panel steps, the solve, the error check's wait);
the bad step ~0.5-1.5 ms (the batched LU of 512 matrices and the batched solves, the 34 MB expanded copy): ~5-10x.
The extra time is the same factorisation recomputed 512 times (the needed work by a costlier method: cause
"move_work", resource None: library kernels).

    python shared_matrix_solve.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

R, N = 512, 128


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (two values a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    r, n = (R, N) if cuda else (16, 8)
    g = torch.Generator(device=dev).manual_seed(0)
    a0 = torch.randn(n, n, generator=g, device=dev) / n**0.5
    eye = torch.eye(n, device=dev)
    bs = [torch.randn(r, n, generator=g, device=dev) for _ in range(4)]
    kept: list = []
    it = [0]

    def step():
        k = it[0]
        it[0] += 1
        a = a0 + (2.0 + 0.01 * (k % 7)) * eye
        b = bs[k % 4]
        if variant == "bad":
            x = torch.linalg.solve(a.expand(r, n, n), b)
        else:
            x = torch.linalg.solve(a, b.T).T
        return x[0, :2]

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
