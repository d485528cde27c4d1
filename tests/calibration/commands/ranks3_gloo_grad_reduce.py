"""A data-parallel training loop on 2 ranks (one GPU each, NCCL the default group) whose gradients are
all-reduced through a second process group created with ``backend="gloo"`` (made for CPU-side exchanges,
as a script that calls ``dist.new_group(backend="gloo")`` for its object and metrics traffic does, or one
copied from a CPU tutorial's ``init_process_group("gloo")``): every step the flat fp32 gradient bucket is
copied to the host, all-reduced by gloo over TCP on the CPUs, and copied back. PyTorch's distributed
documentation: "Use the NCCL backend for distributed GPU training. Use the Gloo backend for distributed CPU
training." Nothing fails and the values are right. The fix is one change: the bucket all-reduced on the
GPUs through the default (NCCL) group, where it lives.

Stage ``step`` (one ``kprof.range`` per step on each rank): 32768 tokens a rank through 2 residual MLP layers
of width 1024 (1024 → 1024 → 1024, GELU, no biases) with fp32 parameters under bf16 autocast, a squared-output
loss, backward, the gradients (4.2 M, 16.8 MB in fp32) bucketed with ``torch.cat``, all-reduced, SGD.
6 · 4.2 M · 32768 = 8.2e11 FLOPs a rank a step.

Per design (2 x H100 SXM, NVLink): GEMMs and the elementwise work ~2.5-3.5 ms; the bucket's all-reduce
through NCCL ~0.1 ms; through gloo: two pageable copies of 16.8 MB (~1-3 ms each) and gloo's ring on the
host over TCP (~1-3 GB/s: 6-17 ms; 0.8 GB/s measured on a 2-core CPU host): bad ~10-25 ms, good ~3 ms per
step (> 3x). The cause is the slower path taken by the needed all-reduce, not its bytes (the same 16.8 MB).

The kept outputs (each rank's loss per step and its parameters' sum at the end) are identical in both
variants: the 2-rank sum a + b is the same in fp32 whichever backend adds it.

    python ranks3_gloo_grad_reduce.py --variant bad --steps 20
"""

from __future__ import annotations

import contextlib

import torch
import torch.distributed as dist
import torch.nn.functional as F
from _ranks import main

import kprof

LAYERS, WIDTH, HIDDEN, TOKENS, BATCHES, LR = 2, 1024, 1024, 32768, 4, 1e-3


def make(variant: str, rank: int, world: int, cuda: bool, **sizes):
    dev = "cuda" if cuda else "cpu"
    layers, d, hid, t = (LAYERS, WIDTH, HIDDEN, TOKENS) if cuda else (2, 16, 32, 8)
    layers, d, hid, t = (
        sizes.get(k, v) for k, v in (("layers", layers), ("width", d), ("hidden", hid), ("tokens", t))
    )
    # the CPU group, created on every rank (both variants, so only its use differs)
    cpu_group = dist.new_group(backend="gloo")
    group = cpu_group if variant == "bad" else None  # None: the default group (NCCL on the GPUs)
    g = torch.Generator().manual_seed(0)  # the same parameters on every rank
    params = []
    for _ in range(layers):
        params += [
            (torch.randn(hid, d, generator=g) / d**0.5).to(dev),
            (torch.randn(d, hid, generator=g) / hid**0.5 * 0.5).to(dev),
        ]
    for p in params:
        p.requires_grad_()
    gr = torch.Generator().manual_seed(1 + rank)  # each rank its own data
    batches = [torch.randn(t, d, generator=gr).to(dev) for _ in range(BATCHES)]
    sizes_ = [p.numel() for p in params]
    kept: list = []
    state = {"i": 0}

    def autocast():
        return torch.autocast("cuda", dtype=torch.bfloat16) if cuda else contextlib.nullcontext()

    def loop(steps: int) -> None:
        for _ in range(steps):
            h = batches[state["i"] % BATCHES]
            state["i"] += 1
            with kprof.range("step"):
                with autocast():
                    for i in range(layers):
                        w1, w2 = params[2 * i : 2 * i + 2]
                        h = h + F.linear(F.gelu(F.linear(h, w1)), w2)
                    loss = h.float().pow(2).mean()
                loss.backward()
                flat = torch.cat([p.grad.reshape(-1) for p in params])  # one fp32 bucket
                if variant == "bad":  # through the gloo group: to the host, reduced there, back
                    host = flat.cpu()
                    dist.all_reduce(host, group=group)
                    flat.copy_(host)
                else:
                    dist.all_reduce(flat, group=group)  # on the GPUs (NCCL)
                with torch.no_grad():
                    upd = [u.view_as(p) for u, p in zip(flat.split(sizes_), params)]
                    torch._foreach_add_(params, upd, alpha=-LR / world)
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
