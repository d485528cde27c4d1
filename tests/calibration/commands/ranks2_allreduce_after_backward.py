"""A hand-written data-parallel training loop on 2 ranks (NCCL, one GPU each) that all-reduces the gradients
only once the whole backward pass is done: ``loss.backward()``, then ``for p in params: dist.all_reduce(
p.grad)``. The backward's GEMMs and the gradients' communication take turns (the GPU computes, then the
links carry), while every layer's gradient is final long before the backward ends. Nothing fails and the
values are right. The fix is one change: each gradient's all-reduce issued, ``async_op=True``, from a hook
that runs as soon as that gradient is accumulated (``register_post_accumulate_grad_hook``), and waited for
before the update: the communication of the later layers' gradients runs under the earlier layers' backward
(what DDP's bucket hooks do; each gradient here is 134 MB, a bucket of its own under DDP's 25 MB cap).

Stage ``step`` (one ``kprof.range`` per step on each rank): 1024 tokens a rank through 4 residual MLP
layers of width 4096 (4096 → 16384 → 4096, GELU, no biases) in bf16, a squared-output loss, backward, the 8
gradients (537 M, 1.07 GB in bf16) all-reduced, SGD with the average folded into the step size. Balanced by
design: a layer's backward, 4 · 1024 · 134 M = 5.5e11 FLOPs (~1 ms), against its gradients' all-reduce
(268 MB, ~0.8-1.1 ms at 250-350 GB/s a direction).

Per design (2 x H100 SXM, NVLink): forward ~2 ms, backward ~4 ms, all-reduce ~3.5-4.5 ms, update ~1 ms:
bad ~10-11 ms per step (the sum), good ~7-7.5 ms (the all-reduce under the backward, but the last
gradient's): ~1.45x, less where NCCL's kernels and the GEMMs slow each other down when they overlap.

The kept outputs (each rank's loss per step and its parameters' sum at the end) are identical in both
variants: the same all-reduce of the same gradients, issued earlier.

    python ranks2_allreduce_after_backward.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from _ranks import main

import kprof

LAYERS, WIDTH, HIDDEN, TOKENS, BATCHES, LR = 4, 4096, 16384, 1024, 4, 1e-3


def make(variant: str, rank: int, world: int, cuda: bool, **sizes):
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    layers, d, hid, t = (LAYERS, WIDTH, HIDDEN, TOKENS) if cuda else (3, 16, 32, 8)
    layers, d, hid, t = (
        sizes.get(k, v) for k, v in (("layers", layers), ("width", d), ("hidden", hid), ("tokens", t))
    )
    g = torch.Generator().manual_seed(0)  # the same parameters on every rank
    params = []
    for _ in range(layers):
        params += [
            (torch.randn(hid, d, generator=g) / d**0.5).to(dev, dt),
            (torch.randn(d, hid, generator=g) / hid**0.5 * 0.5).to(dev, dt),
        ]
    for p in params:
        p.requires_grad_()
    gr = torch.Generator().manual_seed(1 + rank)  # each rank its own data
    batches = [torch.randn(t, d, generator=gr).to(dev, dt) for _ in range(BATCHES)]
    kept: list = []
    state = {"i": 0}
    works: list = []

    if variant == "good":

        def reduce_when_ready(p):  # runs as soon as p.grad is final, during the backward
            works.append(dist.all_reduce(p.grad, async_op=True))

        for p in params:
            p.register_post_accumulate_grad_hook(reduce_when_ready)

    def loop(steps: int) -> None:
        for _ in range(steps):
            h = batches[state["i"] % BATCHES]
            state["i"] += 1
            with kprof.range("step"):
                for i in range(layers):
                    w1, w2 = params[2 * i : 2 * i + 2]
                    h = h + F.linear(F.gelu(F.linear(h, w1)), w2)
                loss = h.float().pow(2).mean()
                loss.backward()
                if variant == "bad":
                    for p in params:  # every gradient's all-reduce after the whole backward
                        dist.all_reduce(p.grad)
                else:
                    for w in works:  # issued during the backward
                        w.wait()
                    works.clear()
                with torch.no_grad():
                    torch._foreach_add_(params, [p.grad for p in params], alpha=-LR / world)
                for p in params:
                    p.grad = None
                kept.append(loss.detach())

    def output():
        with torch.no_grad():
            total = torch.stack([p.float().sum() for p in params]).sum()
        return torch.cat([torch.stack(kept).float().cpu(), total.reshape(1).cpu()])

    return loop, output


if __name__ == "__main__":
    main(__doc__, make)
