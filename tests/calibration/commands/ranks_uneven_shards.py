"""A data-parallel training loop on 2 ranks (NCCL, one GPU each) over variable-length sequences packed without
padding, whose global batch is sorted by length (to bucket similar lengths) and then split into contiguous
halves: rank 0 always gets the 16 shortest sequences (~1.5 K tokens), rank 1 the 16 longest (~29 K tokens).
Rank 1 does ~19x rank 0's GPU work and rank 0 waits for it at the gradients' all_reduce every step: rank 1
is the straggler, by more GPU work. Nothing fails and the values are right (the loss is normalised by the
global token count). The fix is one change: the sorted batch dealt out in turn, ``order[rank::world]`` (what
DistributedSampler does with indices): ~15 K tokens a rank.

Stage ``step`` (one ``kprof.range`` per step on each rank): a global batch of 32 sequences, half of 64-128
tokens, half of 1536-2047 (drawn once per batch, 4 batches cycled), the rank's sequences packed into one
stream; an embedding of width 1024 (vocabulary 8192) tied to the output layer, 4 residual MLP layers
(1024 → 4096 → 1024, GELU) in bf16, next-token cross-entropy summed and divided by the global token count,
backward, one all_reduce of the flat gradients (42 M bf16), SGD. The work scales with a rank's tokens:
~(4 · 2 · 2 · 1024 · 4096 + 2 · 1024 · 8192) · 3 = 2.5e8 FLOPs a token, forward and backward.

Per design (2 x H100 SXM, NVLink): bad ~9-11 ms per step (rank 1's ~29 K tokens; rank 0 idles at the
all_reduce), good ~5-6 ms (~15 K tokens each): ≥ 1.5x.

Measured (2 x H100 80GB HBM3 NVLink, torch 2.11, NCCL_NVLS_ENABLE=0, 2026-11-26, quick check, 10 steps x 2
rounds): bad 16.2 ms, good 9.04 ms per step: 1.79x; the ranks' summed outputs agree to 1.2e-5 (relative).

The kept outputs (each rank's share of the global loss per step, whose sum over the ranks is the global
loss, and the parameters' sum at the end) agree between the variants, summed over the ranks, to rounding:
the same tokens, split otherwise (GEMMs of other shapes).

    python ranks_uneven_shards.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from _ranks import main

import kprof

GLOBAL_SEQS, SHORT, LONG, VOCAB, WIDTH, HIDDEN, LAYERS, BATCHES, LR = (
    32,
    (64, 129),
    (1536, 2048),
    8192,
    1024,
    4096,
    4,
    4,
    1e-2,
)


def shard(lengths: list, variant: str, rank: int, world: int) -> list:
    """The indices of the sequences ``rank`` trains on: the batch sorted by length (bucketed), then split."""
    order = sorted(range(len(lengths)), key=lambda j: lengths[j])
    if variant == "bad":
        per = len(order) // world
        return order[rank * per : (rank + 1) * per]  # contiguous halves: rank 1 the longest
    return order[rank::world]  # dealt out in turn


def batch_lengths(n: int, short: tuple, long_: tuple, g) -> torch.Tensor:
    """A global batch's sequence lengths: half short, half long, shuffled."""
    lens = torch.cat(
        [torch.randint(*short, (n // 2,), generator=g), torch.randint(*long_, (n - n // 2,), generator=g)]
    )
    return lens[torch.randperm(n, generator=g)]


def make(variant: str, rank: int, world: int, cuda: bool, **sizes):
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    n, short, long_, v, d, hid, layers = (
        (GLOBAL_SEQS, SHORT, LONG, VOCAB, WIDTH, HIDDEN, LAYERS)
        if cuda
        else (8, (2, 5), (20, 30), 50, 8, 16, 2)
    )
    g = torch.Generator().manual_seed(0)  # the data and the parameters, the same on every rank
    batches = []  # each a list of token-id sequences (on the device), in the sampler's order
    for _ in range(BATCHES):
        lens = batch_lengths(n, short, long_, g)
        batches.append([torch.randint(0, v, (int(k),), generator=g).to(dev) for k in lens])
    params = [(torch.randn(v, d, generator=g) * 0.5).to(dev, dt)]
    for _ in range(layers):
        params += [
            (torch.randn(hid, d, generator=g) / d**0.5).to(dev, dt),
            (torch.randn(d, hid, generator=g) / hid**0.5 * 0.5).to(dev, dt),
        ]
    for p in params:
        p.requires_grad_()
    sizes_ = [p.numel() for p in params]
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            seqs = batches[state["i"] % BATCHES]
            state["i"] += 1
            with kprof.range("step"):
                mine = shard([s.numel() for s in seqs], variant, rank, world)
                total = sum(s.numel() - 1 for s in seqs)  # the global count of predicted tokens
                ids = torch.cat([seqs[j][:-1] for j in mine])
                tgt = torch.cat([seqs[j][1:] for j in mine])
                emb = params[0]
                h = F.embedding(ids, emb)
                for i in range(layers):
                    w1, w2 = params[1 + 2 * i : 3 + 2 * i]
                    h = h + F.linear(F.gelu(F.linear(h, w1)), w2)
                loss = F.cross_entropy(F.linear(h, emb).float(), tgt, reduction="sum") / total
                loss.backward()
                flat = torch.cat([p.grad.reshape(-1) for p in params])
                dist.all_reduce(flat)
                with torch.no_grad():
                    upd = [u.view_as(p) for u, p in zip(flat.split(sizes_), params)]
                    torch._foreach_add_(params, upd, alpha=-LR)
                for p in params:
                    p.grad = None
                kept.append(loss.detach())  # this rank's share of the global loss

    def output():
        with torch.no_grad():
            total = torch.stack([p.float().sum() for p in params]).sum()
        return torch.cat([torch.stack(kept).float().cpu(), total.reshape(1).cpu()])

    return loop, output


if __name__ == "__main__":
    main(__doc__, make)
