"""Per-row quadratic forms q_i = x_iᵀ S x_i (Mahalanobis distances, a Gaussian's log-density, a Laplace
approximation's variances) taken as the diagonal of the full product: ``torch.diagonal(X @ S @ X.T)``
computes all N x N cross terms x_iᵀ S x_j (2·N²·D FLOPs and an N x N matrix written) to keep N of them,
where ``((X @ S) * X).sum(-1)`` computes only the diagonal (the same N·D² GEMM, then N·D multiply-adds).
Nothing fails; the values are the same up to rounding. Sources: the NumPy documentation of numpy.einsum
(``einsum('ij,jk,ik->i', X, S, X)``: a diagonal of a product without the product), scikit-learn's
EmpiricalCovariance.mahalanobis (``np.sum(np.dot(X, precision) * X, 1)``), and Petersen & Pedersen, "The
Matrix Cookbook" (§1.1: diag(A B) as row-wise sums of A ∘ Bᵀ).

Stage ``step`` (one ``kprof.range`` per step): X [8192, 2048] bf16, S [2048, 2048] bf16 (a symmetric
positive-definite precision matrix); the step computes q [8192] and keeps its mean. Bad:
``torch.diagonal(X @ S @ X.T)`` (evaluated left to right: (X S) then (X S) Xᵀ, an 8192 x 8192 bf16 matrix).
Good: ``((X @ S) * X).sum(-1)``. The same inputs.

Per design (H100 SXM): bad 68.7 + 275 GFLOP on the tensor cores (~0.5-0.6 ms) and a 128 MB matrix written;
good 68.7 GFLOP (~0.1 ms) and an elementwise product and row sum over 32 MB (~0.03 ms): ~4x. The extra time
is the 275-GFLOP product whose off-diagonal entries are never used (cause "move_work": a full product where
its diagonal serves), resource "tensor".

    python quad_form_diag.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

ROWS, DIM = 8192, 2048


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's mean quadratic form), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    n, d = (ROWS, DIM) if cuda else (48, 32)
    g = torch.Generator().manual_seed(0)
    w = torch.randn(d, d, generator=g) / d**0.5
    s = (w @ w.T / 2 + 0.5 * torch.eye(d)).to(dev, dt)  # a symmetric positive-definite precision matrix
    x = (torch.randn(n, d, generator=g) / d**0.5).to(dev, dt)
    kept: list = []

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    if variant == "bad":
                        q = torch.diagonal(x @ s @ x.T)  # all N x N cross terms, N of them kept
                    else:
                        q = ((x @ s) * x).sum(-1)
                    kept.append(q.float().mean())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
