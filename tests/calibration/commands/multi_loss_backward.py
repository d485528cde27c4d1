"""A backward pass per loss through the shared trunk where one backward of their sum serves: a multi-task
model (a shared trunk, one small head per task) whose losses are back-propagated one at a time,
``loss_i.backward(retain_graph=True)`` for each task, so that the trunk's backward (two GEMMs a layer, the
bulk of the step) runs once per task; gradients accumulate, so ``sum(losses).backward()`` gives the same
gradients with one backward through the trunk. Sources: the PyTorch documentation of
torch.Tensor.backward / torch.autograd.backward (``retain_graph``; "this function accumulates gradients
in the leaves") and the autograd mechanics notes; the PyTorch forum's recurring answer for multiple losses
("sum the losses and call backward once"); Ruder, "An Overview of Multi-Task Learning in Deep Neural
Networks" (2017) for the hard-parameter-sharing model.

Stage ``step`` (one ``kprof.range`` per step): x [8192, 2048] bf16 through a trunk of 4 Linear(2048, 2048)
+ GELU layers (bf16 weights), 4 task heads Linear(2048, 8), one MSE loss each (fp32); then the backward
and an SGD step (foreach, lr 1e-3), gradients set to None before the step. Bad: for each task,
``loss_i.backward(retain_graph=i < 3)``: 4 backward passes through the trunk. Good:
``torch.stack(losses).sum().backward()``: one. The same gradients (up to the order of the bf16 additions),
the same kept losses up to rounding.

Per design (H100 SXM): the trunk's forward 4 x 68.7 = 275 GFLOP, its backward 550 GFLOP (bf16 tensor
cores, ~0.5-0.7 PFLOP/s): good ~1.3-1.8 ms a step (825 GFLOP); bad ~4-5 ms (275 + 4 x 550 = 2.5 TFLOP):
~2.5-3x. The extra time is the same trunk backward done once per loss (cause "move_work": a costlier method
than one backward of the sum for the same gradients); the GEMMs run on the tensor cores: resource "tensor".

    python multi_loss_backward.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

TOKENS, WIDTH, LAYERS, TASKS, OUT = 8192, 2048, 4, 4, 8


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's summed loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    n, d = (TOKENS, WIDTH) if cuda else (64, 32)
    g = torch.Generator().manual_seed(0)
    trunk = [(torch.randn(d, d, generator=g) / d**0.5).to(dev, dt).requires_grad_() for _ in range(LAYERS)]
    heads = [(torch.randn(d, OUT, generator=g) / d**0.5).to(dev, dt).requires_grad_() for _ in range(TASKS)]
    x = torch.randn(n, d, generator=g).to(dev, dt)
    targets = [torch.randn(n, OUT, generator=g).to(dev) for _ in range(TASKS)]
    params = trunk + heads
    opt = torch.optim.SGD(params, lr=1e-3, foreach=True)
    kept: list = []

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                opt.zero_grad(set_to_none=True)
                h = x
                for w in trunk:
                    h = F.gelu(h @ w)
                losses = [F.mse_loss((h @ w).float(), t) for w, t in zip(heads, targets)]
                if variant == "bad":  # the planted form: one backward per loss through the shared trunk
                    for i, loss in enumerate(losses):
                        loss.backward(retain_graph=i < len(losses) - 1)
                else:  # the fix: one backward of the sum (gradients accumulate: the same gradients)
                    torch.stack(losses).sum().backward()
                opt.step()
                kept.append(torch.stack(losses).detach().sum())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
