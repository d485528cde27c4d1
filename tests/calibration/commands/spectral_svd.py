"""Spectral normalisation (W / σ_max(W), as in SN-GAN discriminators) computed with a full singular value
decomposition at every step — ``torch.linalg.matrix_norm(W, ord=2)`` (cuSOLVER's SVD: many kernels, Jacobi
sweeps, an error check on the host) — where one power-iteration step with persistent vectors serves, as
``torch.nn.utils.parametrizations.spectral_norm`` does (15 iterations when registered, then 1 a step, the
weights changing little between steps). Nothing fails; the values are the same up to rounding (the weights
have a clear spectral gap, the vectors warm). Sources: T. Miyato et al., "Spectral Normalization for Generative
Adversarial Networks" (ICLR 2018: one power iteration a step suffices, the vectors reused), the PyTorch
documentation of torch.nn.utils.parametrizations.spectral_norm and of torch.linalg.matrix_norm (ord=2: the
largest singular value, computed by an SVD), and the PyTorch performance tuning guide.

Stage ``step`` (one ``kprof.range`` per step): 3 spectral-normalised linear layers 256 x 256 fp32 (each weight
moved a little at every step, as an optimizer would: one in-place add), a batch x [1024, 256] scored through
them (linear, leaky ReLU), the score mean kept. Bad: σ = matrix_norm(W, ord=2) for each layer (3 SVDs a step).
Good: u, v persistent, 2 power-iteration steps a layer (4 matrix-vector products, 4 normalisations), σ = uᵀ W v.

Per design (H100 SXM): the good step ~40-60 small kernels, ~0.3-0.5 ms (launch-bound); a 256 x 256 SVD in
cuSOLVER ~1-5 ms (tens of kernels a sweep, a host wait at its end): bad ~4-15 ms a step: >10x. The extra time
is the SVDs (cause "move_work": the needed σ by a costlier method, a full decomposition where a power-iteration
step gives the same value), resource None (many small library kernels, no single pipe).

    python spectral_svd.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

ROWS, DIM, LAYERS = 1024, 256, 3


def _unit(t):
    return t / t.norm()


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's score mean), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    r, d = (ROWS, DIM) if cuda else (16, 24)
    g = torch.Generator().manual_seed(0)
    ws, deltas, us, vs = [], [], [], []
    for _ in range(LAYERS):
        a, b = _unit(torch.randn(d, generator=g)), _unit(torch.randn(d, generator=g))
        w = torch.randn(d, d, generator=g) / d**0.5 + 6.0 * torch.outer(a, b)  # σ1 ≈ 6, σ2 ≈ 2: a clear gap
        u = _unit(torch.randn(d, generator=g))
        for _ in range(15):  # warm vectors, as spectral_norm's registration does
            v = _unit(w.T @ u)
            u = _unit(w @ v)
        ws.append(w.to(dev))
        deltas.append((1e-3 * torch.randn(d, d, generator=g) / d**0.5).to(dev))
        us.append(u.to(dev))
        vs.append(v.to(dev))
    x = torch.randn(r, d, generator=g).to(dev)
    kept: list = []

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    h = x
                    for i, (w, dw) in enumerate(zip(ws, deltas)):
                        w.add_(dw)  # the optimizer's update of the weight
                        if variant == "bad":
                            sigma = torch.linalg.matrix_norm(w, ord=2)  # a full SVD every step
                        else:
                            u = us[i]
                            for _ in range(2):
                                v = F.normalize(torch.mv(w.T, u), dim=0)
                                u = F.normalize(torch.mv(w, v), dim=0)
                            us[i] = u
                            sigma = torch.dot(u, torch.mv(w, v))
                        h = F.leaky_relu(h @ (w / sigma).T, 0.2)
                    kept.append(h.mean())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
