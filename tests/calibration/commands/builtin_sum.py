"""An evaluation loop that averages the per-sample losses with Python's built-in ``sum()`` over a CUDA tensor
(``sum(losses) / len(losses)``, as one writes for a list of floats), where ``losses.sum()`` serves: the
built-in iterates the tensor (``Tensor.__iter__`` unbinds it into B views) and adds them one at a time from the
interpreter, a tiny add kernel launched per sample (B = 64 a step), the GPU idle between them while the host
launches. The same mean up to the order of the fp32 additions (sequential against pairwise). Sources: the
PyTorch performance tuning guide (avoid Python-level loops over tensor elements; CPU-side launch overhead) and
the PyTorch documentation of ``torch.sum``; the CUDA C++ Best Practices Guide (kernel launch overhead, "Execution
Configuration"); the PyTorch forums' recurring "sum() vs torch.sum() on a CUDA tensor" threads.

Stage ``step`` (one ``kprof.range`` per step): a batch x [64, 1024] fp16 (one of four in turn) through a
3-layer MLP (1024 -> 2048 -> 2048 -> 1000 classes, ReLU), per-sample cross-entropy in fp32 against labels
(``reduction="none"``: losses [64]), then the mean loss kept. Bad: ``sum(losses) / len(losses)`` (64 add
kernels a step). Good: ``losses.sum() / len(losses)`` (one reduction kernel).

Model (the needed work): FLOPs 2 x 64 x (1024 x 2048 + 2048 x 2048 + 2048 x 1000) = 1.07e9 (fp16, tensor
cores); bytes: the weights (~16.7 MB) and the activations (~1 MB): ~1.8e7.

Per design (H100/H200): the good step ~70-100 us (~12 kernels, launch-bound); the bad step ~400-550 us (64
more kernel launches from the interpreter, ~5-7 us of host time each): ~4-7x. The extra time is the host's
per-kernel launch cost for many tiny kernels (cause "launch", resource None).

    python builtin_sum.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, DIN, HID, CLASSES = 64, 1024, 2048, 1000


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's mean loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.float16 if cuda else torch.float32
    b, din, hid, nc = (BATCH, DIN, HID, CLASSES) if cuda else (16, 32, 64, 10)
    g = torch.Generator(device=dev).manual_seed(0)
    dims = [din, hid, hid, nc]
    ws = [(torch.randn(o, i, generator=g, device=dev) / i**0.5).to(dt) for i, o in zip(dims, dims[1:])]
    xs = [torch.randn(b, din, generator=g, device=dev).to(dt) for _ in range(4)]
    ys = [torch.randint(0, nc, (b,), generator=g, device=dev) for _ in range(4)]
    kept: list = []
    it = [0]

    def step():
        k = it[0] % 4
        it[0] += 1
        h = xs[k]
        for j, w in enumerate(ws):
            h = F.linear(h, w)
            if j < len(ws) - 1:
                h = F.relu(h)
        losses = F.cross_entropy(h.float(), ys[k], reduction="none")  # [B] fp32
        if variant == "bad":
            return sum(losses) / len(losses)  # the built-in: one add kernel a sample
        return losses.sum() / len(losses)

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
