"""A hand-written data-parallel training loop on 2 ranks (NCCL, one GPU each) that, after every optimizer
step, broadcasts every parameter from rank 0 "to keep the replicas from drifting"
(``for p in params: dist.broadcast(p, src=0)``). The replicas cannot drift: they start equal and apply the
same all-reduced gradients, which is why DDP broadcasts the module's state from rank 0 once, at
construction, and never again (PyTorch's DDP notes: "the DDP constructor ... broadcasts state_dict() from
the process with rank 0 to all other processes"; afterwards the all-reduced gradients keep the replicas
identical). Every step the ranks move the whole model again over the links, in the stream, after the
update: communication that no compute hides. Nothing fails and the values are right. The fix is one change:
the broadcast done once, before training (here at setup, in both variants).

Stage ``step`` (one ``kprof.range`` per step on each rank): 256 tokens a rank through 2 residual MLP layers of
width 4096 (4096 → 16384 → 4096, GELU, no biases) in bf16, a squared-output loss, backward, the gradients
(268 M, 537 MB in bf16) bucketed with ``torch.cat``, all-reduced, SGD; then (bad) the 4 parameter tensors
(134 MB each) broadcast from rank 0. 6 · 268 M · 256 = 4.1e11 FLOPs a rank a step.

Per design (2 x H100 SXM, NVLink; the second ranks set measured ~2.2 ms for 537 MB more of all-reduce): the
GEMMs ~1 ms, the bucket's copy and the update ~1 ms, the all-reduce ~2.2 ms, the broadcast of 537 MB (rank 0
sending, rank 1 receiving) ~1.5-2.5 ms: bad ~5.5-6.5 ms, good ~4 ms per step (~1.5x). Both ranks alike.

The kept outputs (each rank's loss per step and its parameters' sum at the end) are identical in both
variants: the broadcast copies rank 0's parameters onto rank 1's, which are already the same bits.

    python ranks3_param_broadcast.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from _ranks import main

import kprof

LAYERS, WIDTH, HIDDEN, TOKENS, BATCHES, LR = 2, 4096, 16384, 256, 4, 1e-3


def make(variant: str, rank: int, world: int, cuda: bool, **sizes):
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    layers, d, hid, t = (LAYERS, WIDTH, HIDDEN, TOKENS) if cuda else (2, 16, 32, 8)
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
    for p in params:  # once, before training (both variants): what DDP's constructor does
        dist.broadcast(p, src=0)
        p.requires_grad_()
    gr = torch.Generator().manual_seed(1 + rank)  # each rank its own data
    batches = [torch.randn(t, d, generator=gr).to(dev, dt) for _ in range(BATCHES)]
    sizes_ = [p.numel() for p in params]
    kept: list = []
    state = {"i": 0}

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
                flat = torch.cat([p.grad.reshape(-1) for p in params])  # one bucket
                dist.all_reduce(flat)
                with torch.no_grad():
                    upd = [u.view_as(p) for u, p in zip(flat.split(sizes_), params)]
                    torch._foreach_add_(params, upd, alpha=-LR / world)
                    if variant == "bad":  # every step: the whole model from rank 0 again
                        for p in params:
                            dist.broadcast(p, src=0)
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
