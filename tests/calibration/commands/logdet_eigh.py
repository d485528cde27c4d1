"""The log-determinants of a batch of symmetric positive definite matrices (Gaussian-process or Gaussian-mixture
log-likelihoods, one covariance per group) taken through a full symmetric eigendecomposition, log det K = sum of
the logs of the eigenvalues (``torch.linalg.eigvalsh``), where a Cholesky factorisation gives the same value,
log det K = 2 sum log diag L (``torch.linalg.cholesky_ex``, no host wait): the eigenvalues cost an iterative
algorithm (cuSOLVER's batched symmetric eigensolver for n <= 32: sweeps of rotations or a tridiagonal reduction and
its QR iterations) where the factorisation costs n^3 / 3 multiply-adds in one pass. The same values up to
rounding. Sources: Rasmussen & Williams, "Gaussian Processes for Machine Learning" (2006), Algorithm 2.1 and
appendix A.4 (log |K| from the Cholesky factor); Golub & Van Loan, "Matrix Computations" (4th ed.) 4.2 and 8.3-8.5
(Cholesky n^3 / 3 flops against the symmetric eigenproblem's ~4 n^3 / 3 reduction plus iterations); the PyTorch
documentation of ``torch.linalg.cholesky_ex`` ("does not synchronize") and of ``torch.linalg.eigvalsh``.

Stage ``step`` (one ``kprof.range`` per step): K = C + jitter I for C a fixed batch of 8192 SPD matrices 32 x 32
fp32 (jitter a step's value on the GPU), then l = log det K [8192]; the result kept. Bad:
``torch.linalg.eigvalsh(K).log().sum(-1)`` (its error check reads the infos on the host: one synchronisation a
step). Good: ``2 * torch.linalg.cholesky_ex(K).L.diagonal(dim1=-2, dim2=-1).log().sum(-1)``.

Model (the needed work): FLOPs 8192 x 32^3 / 3 x 2 = 1.8e8 (FP32, the Cholesky factorisation); bytes: K read and
written a few times (8192 x 4 KiB = 33.5 MB): ~1.3e8.

Per design (H100/H200): the good step ~0.1-0.2 ms (a batched potrf over 8192 small matrices, the diagonal's
logs, a sum); the bad step ~1-3 ms (the batched eigensolver's sweeps over 8192 matrices, then the host wait for
its infos): ~5-10x. The extra time is the eigensolver's GPU work (cause "move_work": the needed value by a
costlier method than a legal alternative; the one host wait a step is a small part), resource None (cuSOLVER's
kernels, no single pipe).

    python logdet_eigh.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

BATCH, DIM = 8192, 32


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's log-determinants), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, n = (BATCH, DIM) if cuda else (16, 8)
    g = torch.Generator().manual_seed(0)
    f = torch.randn(b, n, 2 * n, generator=g)
    c = (f @ f.transpose(1, 2) / (2 * n) + 0.1 * torch.eye(n)).to(dev)  # SPD, well conditioned
    eye = torch.eye(n, device=dev)
    jitter = torch.linspace(1e-3, 2e-3, 64, device=dev)
    kept: list = []
    it = [0]

    def step():
        k = c + jitter[it[0] % 64] * eye
        it[0] += 1
        if variant == "bad":
            return torch.linalg.eigvalsh(k).log().sum(-1)
        return 2.0 * torch.linalg.cholesky_ex(k).L.diagonal(dim1=-2, dim2=-1).log().sum(-1)

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
