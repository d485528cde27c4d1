"""Training a classifier head on a pretrained backbone that was meant to stay frozen (linear probing, the
head fine-tuned first): the optimizer is given only the head's parameters, but the backbone's parameters still
have ``requires_grad=True`` (the default), so every backward also runs through the whole backbone: the weight
gradient of each of its layers and the input gradient of all but the first, ~2x the forward's FLOPs for
gradients nobody uses (they accumulate in ``.grad``, never applied nor cleared, since the optimizer does not
know them). PyTorch's autograd notes ("Locally disabling gradient computation": setting requires_grad=False on
a frozen part of a model; "if you want to freeze part of your model ... the computation of their gradients
is skipped"); CUDA C++ Best Practices Guide: do the least work that gives the result. Nothing fails and the
values are right (the head sees the same features, gets the same gradient). The fix is one change: the backbone
frozen with ``requires_grad_(False)``.

Stage ``step`` (one ``kprof.range`` per step): 8192 tokens (a new batch from a pool of 4 each step) through the
backbone's 8 residual blocks (LayerNorm, Linear 2048 → 2048, GELU, residual add) in bf16, the head (Linear
2048 → 1024 classes), cross-entropy against fixed labels, backward, an SGD step on the head (lr 0.05). The
model: the work the result needs: the backbone forward 2·T·d²·L and the head forward and weight gradient
4·T·d·C (T = 8192, d = 2048, L = 8, C = 1024): 6.2e11 FLOPs (tensor cores, bf16); bytes: the backbone's weights
read once, each block's LayerNorm, Linear, GELU and residual add reading and writing 9 activation tensors of
T·d·2 B (2.4e9 in all), the head's input, logits and their fp32 copy and gradient (~0.15e9): ~2.6e9.

Per design (H100 SXM): good ~1.2-1.5 ms a step (the forward's GEMMs, ~600 TFLOP/s); bad: the backward through
the backbone adds ~2x the backbone forward's GEMMs (its weight and input gradients, 8 + 7 GEMMs of the
forward's size) and GELU/LayerNorm backward passes and the gradient accumulation: ~3.5-4 ms: ~2.5-3x. The
bad step is tensor-pipe work (resource "tensor") the result does not need (cause "move_work").

    python frozen_backbone.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

TOKENS, WIDTH, BLOCKS, CLASSES = 8192, 2048, 8, 1024


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    t, d, blocks, classes = (TOKENS, WIDTH, BLOCKS, CLASSES) if cuda else (32, 16, 3, 8)
    g = torch.Generator().manual_seed(0)
    backbone = [(torch.randn(d, d, generator=g) / d**0.5).to(dev, dt).requires_grad_() for _ in range(blocks)]
    head = (torch.randn(classes, d, generator=g) / d**0.5).to(dev, dt).requires_grad_()
    # The planted switch: the pretrained backbone frozen, or left with requires_grad=True.
    for w in backbone:
        w.requires_grad_(variant == "bad")
    opt = torch.optim.SGD([head], lr=0.05)
    xs = [torch.randn(t, d, generator=g).to(dev, dt) for _ in range(4)]
    labels = [torch.randint(0, classes, (t,), generator=g).to(dev) for _ in range(4)]
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            i = state["i"] % len(xs)
            state["i"] += 1
            with kprof.range("step"):
                h = xs[i]
                for w in backbone:
                    h = h + F.gelu(F.linear(F.layer_norm(h, (d,)), w))
                loss = F.cross_entropy(F.linear(h, head).float(), labels[i])
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                kept.append(loss.detach())

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
