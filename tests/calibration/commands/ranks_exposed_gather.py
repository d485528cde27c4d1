"""A forward pass over weights sharded across 2 ranks (ZeRO-3 / FSDP style: each rank holds half the rows of
every layer's weight; NCCL, one GPU each) that gathers each layer's weight just before the layer, a blocking
``dist.all_gather_into_tensor`` then the layer's GEMM: the gather and the GEMM take turns, neither hides the
other, and the step pays the communication in full. Nothing fails and the values are right. The fix is one
change: the next layer's gather issued early, ``async_op=True``, into a second buffer, and waited for just
before its layer, so each gather runs while the previous layer computes (FSDP's forward prefetch).

Stage ``step`` (one ``kprof.range`` per step on each rank): 16 layers of a D = 8192 bf16 weight (128 MB;
64 MB a rank's shard), 1024 tokens a rank, h = h + (gelu(h) @ W.T); the full weight gathered per layer (64 MB
received a rank). The model (one rank): the GEMMs, 16 · 2 · 1024 · 8192² = 2.20e12 FLOPs (tensor cores,
bf16); per layer the shard read by the gather (67 MB), the full weight written by it and read by the GEMM
(2 · 134 MB) and the activations' reads and writes (gelu, GEMM, residual add: 7 · 16.8 MB), 16 · 453 MB =
7.25e9 bytes.

Per design (2 x H100 SXM, NVLink): a layer's GEMM ~0.2-0.25 ms, its gather (64 MB at ~350 GB/s) ~0.2 ms; bad
~6-7 ms per step (the sum), good ~4 ms (the larger of the two and one gather): ≥ 1.5x.

Measured (2 x H100 80GB HBM3 NVLink, torch 2.11, NCCL 2.28.9, NCCL_NVLS_ENABLE=0, 2026-11-26, quick check,
10 steps x 2 rounds): bad 8.08 ms, good 6.22 ms per step: 1.30x, below the design's 1.5x (0.50 against 0.39
ms a layer). Not understood without a timeline; a guess: the gather's NCCL kernel and cuBLAS's GEMM compete
for the SMs when they overlap (a GEMM grid sized to the whole GPU runs a second wave on the SMs NCCL takes).

The kept outputs (each rank's mean output per step) are identical in both variants: the same GEMMs on the
same gathered weights.

    python ranks_exposed_gather.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from _ranks import main

import kprof

LAYERS, WIDTH, TOKENS, BATCHES = 16, 8192, 1024, 2


def make(variant: str, rank: int, world: int, cuda: bool, **sizes):
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    layers, d, t = (LAYERS, WIDTH, TOKENS) if cuda else (4, 16, 8)
    layers, d, t = sizes.get("layers", layers), sizes.get("width", d), sizes.get("tokens", t)
    g = torch.Generator().manual_seed(0)  # the same full weights on every rank, each keeps its rows
    rows = d // world
    shards = []
    for _ in range(layers):
        w = torch.randn(d, d, generator=g) / d**0.5 * 0.5
        shards.append(w[rank * rows : (rank + 1) * rows].contiguous().to(dev, dt))
    gr = torch.Generator().manual_seed(1 + rank)  # each rank its own tokens
    batches = [torch.randn(t, d, generator=gr).to(dev, dt) for _ in range(BATCHES)]
    bufs = [torch.empty(d, d, device=dev, dtype=dt) for _ in range(2)]
    kept: list = []
    state = {"i": 0}

    def layer(h, w):
        return h + F.linear(F.gelu(h), w)

    def loop(steps: int) -> None:
        for _ in range(steps):
            h = batches[state["i"] % BATCHES]
            state["i"] += 1
            with kprof.range("step"), torch.no_grad():
                if variant == "bad":
                    for i in range(layers):
                        dist.all_gather_into_tensor(bufs[0], shards[i])  # the layer waits for its gather
                        h = layer(h, bufs[0])
                else:
                    work = dist.all_gather_into_tensor(bufs[0], shards[0], async_op=True)
                    for i in range(layers):
                        work.wait()
                        if i + 1 < layers:  # the next layer's gather runs under this layer's GEMM
                            work = dist.all_gather_into_tensor(
                                bufs[(i + 1) % 2], shards[i + 1], async_op=True
                            )
                        h = layer(h, bufs[i % 2])
                kept.append(h.float().mean())

    return loop, (lambda: torch.stack(kept).float().cpu())


if __name__ == "__main__":
    main(__doc__, make)
