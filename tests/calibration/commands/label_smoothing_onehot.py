"""A label-smoothed cross-entropy written out by hand: the targets expanded into one-hot rows (F.one_hot: an
int64 [N, V] tensor), cast to float, smoothed ((1 - eps) one_hot + eps / V) and multiplied into the full
log_softmax, the product summed over the vocabulary, where ``F.cross_entropy(logits, y, label_smoothing=eps)``
gives the same loss from the log-probabilities and the targets' indices (no [N, V] target tensor). Sources: the
PyTorch documentation of torch.nn.CrossEntropyLoss (label_smoothing: "the targets become a mixture of the
original ground truth and a uniform distribution"; class indices preferred to probabilities "as it allows for
optimized computation"); C. Szegedy et al., "Rethinking the Inception Architecture for Computer Vision" (CVPR
2016: label-smoothing regularisation); the CUDA C++ Best Practices Guide ("Memory Optimizations").

Stage ``step`` (one ``kprof.range`` per step, the loss of a language-model batch, forward only): logits
[4096, 32000] fp32 (524 MB; one of two in turn), targets [4096] int64, eps = 0.1; the loss kept. Bad: ``t =
F.one_hot(y, V).float() * (1 - eps) + eps / V; loss = -(t * F.log_softmax(x, -1)).sum(-1).mean()``. Good:
``F.cross_entropy(x, y, label_smoothing=eps)``. The same loss up to fp32 summation order.

Model (the needed work): FLOPs ~5 an entry (the log-softmax): 6.6e8; bytes the logits read (and the
log-probabilities written and read back once): 1.6e9.

Per design (H100/H200): the good step ~0.4-0.6 ms (log_softmax, the target gather and one smoothing sum, ~1.6 GB);
the bad step moves ~7.9 GB through DRAM (the int64 one-hot written as zeros and scattered, 1 GB; its float copy,
the two smoothing passes, the log_softmax, the product and its sum, each a [4096, 32000] fp32 tensor written and
read): ~2-2.5 ms, ~4-5x. The extra time is the bytes of the materialised target tensors moved through DRAM (cause
"over_fetch", resource "dram").

    python label_smoothing_onehot.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

N, V, EPS = 4096, 32000, 0.1


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (the loss of each step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    n, v = (N, V) if cuda else (16, 50)
    g = torch.Generator(device=dev).manual_seed(0)
    xs = [torch.randn(n, v, generator=g, device=dev) * 2.0 for _ in range(2)]
    ys = [torch.randint(0, v, (n,), generator=g, device=dev) for _ in range(2)]
    kept: list = []
    it = [0]
    F = torch.nn.functional

    def step():
        x, y = xs[it[0] % 2], ys[it[0] % 2]
        it[0] += 1
        if variant == "bad":
            t = F.one_hot(y, v).float() * (1.0 - EPS) + EPS / v
            loss = -(t * F.log_softmax(x, -1)).sum(-1).mean()
        else:
            loss = F.cross_entropy(x, y, label_smoothing=EPS)
        return loss.reshape(1)

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(step())

    return loop, (lambda: torch.cat(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
