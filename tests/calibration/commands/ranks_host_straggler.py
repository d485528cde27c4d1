"""A data-parallel masked-language-model training loop on 2 ranks (NCCL, one GPU each) whose data is read and
prepared by one rank only (rank 1, "the data rank", so the files are read once): every step rank 1 masks
and collates the WHOLE global batch on the host (a Python loop over every token: 15 % of the tokens, chosen
by a hash of token, position and step, replaced by the mask id, their labels kept), moves it to its GPU and
broadcasts it; rank 0 waits at the broadcast for rank 1's host work. Rank 1 is the straggler, by host work;
the GPUs idle. Nothing fails and the values are right. The fix is one change: each rank masks and collates
its own half of the global batch (the same samples it trains on), no broadcast: the host work halved on the
critical path and spread evenly. In both variants the batch is copied from page-locked memory without
blocking (``pin_memory``, ``non_blocking=True``, as a DataLoader with ``pin_memory=True``), so a step's host
work runs while the GPU runs the step before.

Stage ``step`` (one ``kprof.range`` per step on each rank): 16 sequences of 512 token ids a rank (vocabulary
8192), an embedding of width 512 tied to the output layer and a residual MLP (512 → 2048 → 512, GELU) in
bf16, cross-entropy over the masked tokens, backward, one all_reduce of the flat gradients (6.3 M bf16), SGD.

Per design (2 x H100 SXM, NVLink): the host's masking ~0.5 µs a token (3.9 ms for a rank's 8192 tokens on
the GPU machine's CPU, 7.8 ms for the global batch), its collation and ~45 launches ~2 ms more; the GPU's
step ~1.7 ms, shorter than the host's and run under the next step's host work: the host is the critical
path. Bad ~9 ms per step (rank 1's host work for both ranks: 9.1 ms measured with the first design, below),
good ~5-6 ms (each rank's own half): ~1.6x.

Measured (2 x H100 80GB HBM3 NVLink, torch 2.11, 2026-11-26), the first design (pageable ``.to("cuda")``
copies, which wait for the GPU's previous step): bad 9.1 ms, good 8.6 ms per step (quick check, 1.06x): the
blocking copy put the GPU's step (1.7 ms of kernels a rank, Nsight Systems) and the host's work end to end
in the good variant too. The copies were made asynchronous in both variants (not measured since).

The kept outputs (each rank's loss per step and its parameters' sum at the end) are identical in both
variants: each rank trains on the same samples, prepared by the same code.

    python ranks_host_straggler.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from _ranks import main

import kprof

SEQS, SEQ, VOCAB, WIDTH, HIDDEN, SAMPLES, LR = 16, 512, 8192, 512, 2048, 256, 1e-2
MASK_ID, IGNORE = 3, -100


def mask_and_collate(samples, step):
    """A batch of Python token lists masked on the host (BERT-style, deterministic) and collated into
    ``(ids, labels)``: the per-token Python loop is the host work."""
    ids, labels = [], []
    for s in samples:
        row, lab = [], []
        for pos, tok in enumerate(s):
            if (tok * 2654435761 + pos * 40503 + step * 97) % 1000 < 150:
                row.append(MASK_ID)
                lab.append(tok)
            else:
                row.append(tok)
                lab.append(IGNORE)
        ids.append(row)
        labels.append(lab)
    return torch.tensor(ids), torch.tensor(labels)


def make(variant: str, rank: int, world: int, cuda: bool, **sizes):
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, t, v, d, hid = (SEQS, SEQ, VOCAB, WIDTH, HIDDEN) if cuda else (2, 16, 50, 8, 16)
    b, t = sizes.get("seqs", b), sizes.get("seq", t)
    g = torch.Generator().manual_seed(0)  # the dataset and the parameters, the same on every rank
    data = torch.randint(4, v, (SAMPLES, t), generator=g).tolist()  # pre-tokenized samples, Python lists
    params = [
        (torch.randn(v, d, generator=g) * 0.5).to(dev, dt),
        (torch.randn(hid, d, generator=g) / d**0.5).to(dev, dt),
        (torch.randn(d, hid, generator=g) / hid**0.5).to(dev, dt),
    ]
    for p in params:
        p.requires_grad_()
    sizes_ = [p.numel() for p in params]
    recv = torch.empty(2, world * b, t, dtype=torch.int64, device=dev)  # the broadcast's buffer
    kept: list = []
    state = {"i": 0}

    def pinned(t):  # page-locked, so the copy to the GPU is asynchronous (as DataLoader's pin_memory)
        return t.pin_memory() if cuda else t

    def global_batch(step):  # the step's samples, rank r's half at [r * b, (r + 1) * b)
        start = (step * world * b) % (SAMPLES - world * b + 1)
        return data[start : start + world * b]

    def loop(steps: int) -> None:
        for _ in range(steps):
            step = state["i"]
            state["i"] += 1
            with kprof.range("step"):
                samples = global_batch(step)
                if variant == "bad":
                    if rank == 1:  # the data rank prepares everyone's batch
                        ids, labels = mask_and_collate(samples, step)
                        recv.copy_(pinned(torch.stack([ids, labels])), non_blocking=True)
                    dist.broadcast(recv, src=1)
                    ids, labels = recv[0, rank * b : (rank + 1) * b], recv[1, rank * b : (rank + 1) * b]
                else:
                    ids, labels = mask_and_collate(samples[rank * b : (rank + 1) * b], step)
                    ids = pinned(ids).to(dev, non_blocking=True)
                    labels = pinned(labels).to(dev, non_blocking=True)
                emb, w1, w2 = params
                h = F.embedding(ids, emb)
                h = h + F.linear(F.gelu(F.linear(h, w1)), w2)
                logits = F.linear(h, emb)
                loss = F.cross_entropy(logits.float().reshape(-1, v), labels.reshape(-1), ignore_index=IGNORE)
                loss.backward()
                flat = torch.cat([p.grad.reshape(-1) for p in params])
                dist.all_reduce(flat)
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
