"""A training loop that calls ``gc.collect()`` after every step "to keep memory down", in a process that holds
its dataset's samples as Python objects (dicts of token lists and metadata, as map-style datasets, caches and
tokenised corpora do): each full collection walks every tracked container of the heap (the samples'
~120,000 and the process's own: torch's modules, functions and caches), milliseconds of CPU time during
which nothing new is launched, and the GPU, its queue drained, waits. The step's tensors are freed by
reference counting anyway; nothing in the loop makes reference cycles, so the collection frees nothing. Sources: the Python documentation of the ``gc`` module (a full collection examines
every tracked object of the oldest generation); Megatron-LM's ``--manual-gc`` / ``--manual-gc-interval``
options (automatic collections disabled and a collection every N steps, because Python's garbage collection
stalled the training step); the PyTorch forums' "training slows down with gc.collect() in the loop" threads.
Nothing fails and the values are identical. The fix is one change: no ``gc.collect()`` in the loop (Python's
automatic, generational collection left to run, which here never reaches the old generation).

Stage ``step`` (one ``kprof.range`` per step, the collection inside it): a batch of 8192 examples of 2048
features (a pool of 4 on the GPU), an MLP of six 2048 x 2048 linear layers with GELU, bf16 autocast, MSE
against targets, backward, a foreach SGD step. The model: 3·2·8192·2048²·6 = 1.2e12 FLOPs (tensor cores), the
bytes: the activations written forward and read back (~8192·2048·2·6·4 ≈ 0.8 GB), the weights: ~1e9.

Per design (H100 SXM): good ~2.5-3.5 ms a step, GPU-bound (the GEMMs); bad the same GPU work plus a full
collection of the heap on the host, during which the GPU, its ~60 queued operations done, idles: ~3-10x.
Revised after the first call's quick check (118.7x there: 400,000 samples, ~1.2 M tracked containers, made
each collection ~0.3 s, a bad step too long for the recording's ~600 steps): 40,000 samples; the collection,
the model and the cause unchanged. CPU work between launches sets the bad step (cause "host"; no pipe or
device memory level is busy: resource None).

    python gc_every_step.py --variant bad --steps 20
"""

from __future__ import annotations

import gc

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, WIDTH, LAYERS, SAMPLES = 8192, 2048, 6, 40_000


def dataset(n: int) -> list:
    """The samples the process holds as Python objects (3 tracked containers each)."""
    return [
        {"id": i, "tokens": [(i * 7 + j) % 50_000 for j in range(8)], "meta": {"src": i % 13, "len": 8}}
        for i in range(n)
    ]


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, w, samples = (BATCH, WIDTH, SAMPLES) if cuda else (16, 32, 2000)
    records = dataset(samples)
    g = torch.Generator().manual_seed(0)
    params = [(torch.randn(w, w, generator=g) / w**0.5).to(dev) for _ in range(LAYERS)]
    for p in params:
        p.requires_grad_()
    xs = [torch.randn(b, w, generator=g).to(dev) for _ in range(4)]
    ys = [torch.randn(b, w, generator=g).to(dev) for _ in range(4)]
    kept: list = []
    state = {"i": 0, "records": records}

    def loop(steps: int) -> None:
        for _ in range(steps):
            k = state["i"] % len(xs)
            state["i"] += 1
            with kprof.range("step"):
                h = xs[k]
                with torch.autocast(dev, dtype=torch.bfloat16, enabled=cuda):
                    for p in params:
                        h = F.gelu(F.linear(h, p))
                loss = F.mse_loss(h.float(), ys[k])
                loss.backward()
                with torch.no_grad():
                    torch._foreach_add_(params, [p.grad for p in params], alpha=-1e-3)
                    for p in params:
                        p.grad = None
                kept.append(loss.detach())
                # The planted switch: a full garbage collection after every step.
                if variant == "bad":
                    gc.collect()

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
