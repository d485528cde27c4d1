"""A convolutional network trained with ``torch.backends.cudnn.benchmark = True`` on batches whose image size
changes from one step to the next (aspect-ratio-preserving resizes padded per batch, as detection and
segmentation pipelines make; variable-resolution inputs): cuDNN's autotuner runs for every new input shape,
timing several algorithms for each convolution's forward, data-gradient and weight-gradient before the step
can go on, so every step pays a first call's cost. The fix is the default, ``benchmark = False`` (cuDNN's
heuristics choose an algorithm without timing), which is what the PyTorch tuning guide and Detectron2 advise
for varying input sizes. The losses are the same up to the algorithms' rounding. Sources: the PyTorch
Performance Tuning Guide, "Enable cuDNN auto-tuner" ("if the input sizes change ... the auto-tuner ... would
be re-run for each new size"); the PyTorch documentation of ``torch.backends.cudnn.benchmark`` and
``benchmark_limit``; Detectron2's ``CUDNN_BENCHMARK: False`` default ("if input images have very different
sizes, this option will have large overhead").

Stage ``step`` (one ``kprof.range`` per step): a batch of 16 RGB images whose height and width step through a
fixed permutation of the 16 x 16 sizes {256, 288, ..., 736} (a new pair every step for 256 steps: no size
repeats within a process's warm-up and timed steps), a five-layer CNN (3x3 convolutions, 32-256 channels,
stride 2 in the first four, ReLU), global average pooling and a linear head, bf16 autocast, cross-entropy
against fixed labels, backward, a foreach SGD step. Both variants see the same sizes in the same order.

Per design (H100 SXM): good ~3-8 ms a step (the convolutions, cuDNN's heuristic choices for each new shape);
bad the same work plus cuDNN's autotuning of each of the ~14 convolution calls (forward, backward-data,
backward-filter) at every step, algorithms timed on the GPU with the host waiting: several times the step.
The extra time is a one-off (first-call) cost paid at every step (cause "first_call"; no pipe or memory level
owns it: resource None).

    python cudnn_benchmark_new_shapes.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, CLASSES = 16, 100
CHANNELS = (3, 32, 64, 128, 128, 256)


def sizes(cuda: bool) -> list:
    """The (height, width) of every step: a fixed permutation of a 16 x 16 grid of sizes."""
    base, step, n = (256, 32, 16) if cuda else (24, 4, 4)
    grid = [(base + step * i, base + step * j) for i in range(n) for j in range(n)]
    order = torch.randperm(len(grid), generator=torch.Generator().manual_seed(1)).tolist()
    return [grid[k] for k in order]


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    # The planted switch: cuDNN's autotuner on for inputs whose size changes every step.
    torch.backends.cudnn.benchmark = variant == "bad"
    b = BATCH if cuda else 2
    chans = CHANNELS if cuda else (3, 4, 8, 8, 8, 8)
    g = torch.Generator().manual_seed(0)
    convs = [
        (torch.randn(o, i, 3, 3, generator=g) * (2.0 / (9 * i)) ** 0.5).to(dev).requires_grad_()
        for i, o in zip(chans[:-1], chans[1:])
    ]
    head = (torch.randn(CLASSES, chans[-1], generator=g) / chans[-1] ** 0.5).to(dev).requires_grad_()
    params = [*convs, head]
    shapes = sizes(cuda)
    top = max(max(s) for s in shapes)
    images = torch.randn(b, 3, top, top, generator=g).to(dev)
    labels = torch.randint(0, CLASSES, (b,), generator=g).to(dev)
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            hgt, wid = shapes[state["i"] % len(shapes)]
            state["i"] += 1
            with kprof.range("step"):
                x = images[:, :, :hgt, :wid]
                with torch.autocast(dev, dtype=torch.bfloat16, enabled=cuda):
                    for i, wgt in enumerate(convs):
                        x = F.relu(F.conv2d(x, wgt, stride=2 if i < 4 else 1, padding=1))
                    logits = F.linear(x.mean((2, 3)), head)
                loss = F.cross_entropy(logits.float(), labels)
                loss.backward()
                with torch.no_grad():
                    torch._foreach_add_(params, [p.grad for p in params], alpha=-1e-3)
                    for p in params:
                        p.grad = None
                kept.append(loss.detach())

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
