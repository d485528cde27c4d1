"""A hand-written data-parallel training loop on 2 ranks (NCCL, one GPU each) that trains in bf16 but
all-reduces the gradients in fp32 "for accuracy" (as Megatron-LM's ``--accumulate-allreduce-grads-in-fp32``
or a reduce dtype of float32 does): every step the bf16 gradients are bucketed, the bucket cast up to fp32,
all-reduced, averaged and cast back to bf16 for the update. The collective moves twice the bytes it needs
and the two casts add two passes over the gradients; with 2 ranks the fp32 sum buys nothing (one addition of
two bf16 values, rounded once to bf16 in both cases). Nothing fails and the values are right. The fix is one
change: the bf16 bucket all-reduced as it is (what DDP's ``bf16_compress_hook`` or FSDP's
``reduce_dtype=torch.bfloat16`` do).

Stage ``step`` (one ``kprof.range`` per step on each rank): 512 tokens a rank through 2 residual MLP layers
of width 4096 (4096 → 16384 → 4096, GELU, no biases) in bf16, a squared-output loss, backward, the
gradients (268 M, 537 MB in bf16) bucketed with ``torch.cat``, all-reduced, averaged, SGD. The compute is
small against the communication: 6 · 268 M · 512 = 8.2e11 FLOPs a rank a step.

Per design (2 x H100 SXM, NVLink, ~250-350 GB/s a direction for a 2-rank all-reduce, as the first ranks
set's gather suggested): GEMMs ~1.5 ms, the bucket's copy and the update ~1 ms, the all-reduce of 537 MB
~1.5-2.2 ms in bf16 and ~3-4.3 ms in fp32, the casts (3.2 GB moved) ~1.1 ms: bad ~7-8 ms, good ~4-4.5 ms
per step (~1.6x).

The kept outputs (each rank's loss per step and its parameters' sum at the end) are identical in both
variants: round(a + b) to bf16 whether the sum is taken in fp32 or by NCCL's bf16 reduction (which adds in
fp32 and rounds once), and the halving is exact.

    python ranks2_fp32_grad_reduce.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from _ranks import main

import kprof

LAYERS, WIDTH, HIDDEN, TOKENS, BATCHES, LR = 2, 4096, 16384, 512, 4, 1e-3


def make(variant: str, rank: int, world: int, cuda: bool, **sizes):
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16  # bf16 on the CPU too (gloo reduces bf16): the casts are real in the tests
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
    for p in params:
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
                flat = torch.cat([p.grad.reshape(-1) for p in params])  # one bf16 bucket
                if variant == "bad":
                    flat32 = flat.float()  # reduced in fp32: twice the bytes, two more passes
                    dist.all_reduce(flat32)
                    flat32 /= world
                    flat = flat32.to(dt)
                else:
                    dist.all_reduce(flat)  # reduced in bf16
                    flat /= world
                with torch.no_grad():
                    upd = [u.view_as(p) for u, p in zip(flat.split(sizes_), params)]
                    torch._foreach_add_(params, upd, alpha=-LR)
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
