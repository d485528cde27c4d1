"""torch.linalg.cholesky called in a loop on the GPU: the function checks its LAPACK-style error codes (a
matrix not positive-definite raises an error) by reading them on the host, so every call ends in a
device-to-host copy and a wait for the GPU — the queue drains and the GPU idles while the host launches the
next kernels. PyTorch's documentation says it: "When inputs are on a CUDA device, this function synchronizes
that device with the CPU. For a version of this function that does not synchronize, see
torch.linalg.cholesky_ex()". Nothing fails; the values are the same. The fix: ``torch.linalg.cholesky_ex``
(its ``info`` checked once after the loop, or not at all where the matrices are positive-definite by
construction). Sources: the PyTorch documentation of torch.linalg.cholesky / cholesky_ex (and likewise
linalg.inv / inv_ex, linalg.solve / solve_ex), and the CUDA C++ Best Practices Guide ("Asynchronous and
Overlapping Transfers with Computation": a blocking host call ends the overlap of host and device work).

Stage ``step`` (one ``kprof.range`` per step): the log-likelihoods of 16 groups of batched Gaussian models
(a Gaussian-process / Kalman-filter evaluation): for each group, covariances S = K_g + U Uᵀ + jitter·I (a
batch [64, 64, 64] fp32, U [64, 64, 16]: one bmm, an add), L = cholesky(S), z = L⁻¹ r (solve_triangular), the
log-likelihood -½·|z|² - Σ log diag(L) summed: ~9 GPU operations a group, 16 groups a step, the step's total
kept. Bad: ``torch.linalg.cholesky(S)`` (16 host waits a step). Good: ``torch.linalg.cholesky_ex(S).L``.

Per design (H100 SXM): a group's GPU work ~40-70 µs (a batched potrf of 64 64 x 64 matrices, a batched
triangular solve, small kernels), its host work ~60-90 µs (launches, the library's workspace queries): good
~1.0-1.5 ms a step (the host and the GPU overlap); bad: each call drains the queue and adds a copy, ~2-2.5 ms
a step: ~1.6-2x. The extra time is the host waiting for the GPU at each call (cause "sync"), resource None.

    python linalg_sync.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

GROUPS, BATCH, N, RANK = 16, 64, 64, 16


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's summed log-likelihood), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    groups, b, n, rk = (GROUPS, BATCH, N, RANK) if cuda else (3, 4, 8, 2)
    g = torch.Generator().manual_seed(0)
    base, lowrank, resid = [], [], []
    for _ in range(groups):
        a = torch.randn(b, n, n, generator=g) / n**0.5
        base.append((a @ a.mT + 0.5 * torch.eye(n)).to(dev))  # positive-definite by construction
        lowrank.append((0.3 * torch.randn(b, n, rk, generator=g)).to(dev))
        resid.append(torch.randn(b, n, 1, generator=g).to(dev))
    eye = 1e-3 * torch.eye(n, device=dev)
    kept: list = []

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    total = None
                    for k, u, r in zip(base, lowrank, resid):
                        s = k + u @ u.mT + eye
                        if variant == "bad":
                            lo = torch.linalg.cholesky(s)  # checks its info on the host: a wait each call
                        else:
                            lo = torch.linalg.cholesky_ex(s).L
                        z = torch.linalg.solve_triangular(lo, r, upper=False)
                        ll = -0.5 * (z * z).sum() - torch.diagonal(lo, dim1=-2, dim2=-1).log().sum()
                        total = ll if total is None else total + ll
                    kept.append(total)

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
