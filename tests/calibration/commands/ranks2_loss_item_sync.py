"""A data-parallel language-model training loop on 2 ranks (NCCL, one GPU each) that logs the global loss
every step: ``dist.all_reduce(loss)`` then ``loss.item()`` into the history, as many hand-written loops do
for a progress line. The ``.item()`` makes each rank's host wait until its GPU has finished the step, the
all-reduce included, i.e. until the slower rank is there too: the host prepares the next batch (documents
packed into sequences in Python, each token's position and label) only once the GPU is done, and the GPU
idles while it does. Nothing fails and the values are right. The fix is one change: the per-step losses
kept on the GPU and all-reduced and read every 10 steps (a log interval), so the host packs the next batch
while the GPU trains on this one (the batch copied from page-locked memory without blocking in both
variants).

Stage ``step`` (one ``kprof.range`` per step on each rank): the rank's batch packed on the host from
pre-tokenized documents (8 sequences of 1024 tokens, positions restarting at each document, each token's
label the next token of its document; a Python loop over the 8192 tokens), an embedding of width 1536
(vocabulary 8192) tied to the output layer plus a learned position embedding, 4 residual MLP layers
(1536 → 6144 → 1536, GELU) in bf16, cross-entropy, backward, one all-reduce of the flat gradients (90 M
bf16, 179 MB), SGD. GEMMs: 6 · 8192 · (75.5 M + 12.6 M) = 4.3e12 FLOPs a rank a step.

Per design (2 x H100 SXM, NVLink): the host's packing ~6 ms a step (the first ranks set's masking of 8192
tokens, a Python loop of the same kind, took ~6-7 ms on the GPU machine's CPU), ~70 launches ~1.5 ms; the
GPU's step ~8-9 ms (the GEMMs ~7.5 ms, the logits' cross-entropy, the all-reduce of 179 MB): bad ~15 ms
per step (host, then GPU, end to end), good ~9 ms (the larger of the two): ~1.7x.

The kept outputs (the logged global loss of every step and each rank's parameters' sum at the end) are
identical in both variants: the same sums of the same losses, halved exactly.

    python ranks2_loss_item_sync.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from _ranks import main

import kprof

SEQS, SEQ, VOCAB, WIDTH, HIDDEN, LAYERS, DOCS, LOG_EVERY, LR = 8, 1024, 8192, 1536, 6144, 4, 512, 10, 1e-2
IGNORE = -100


def pack(docs, start, seqs, seq):
    """``seqs`` sequences of ``seq`` tokens packed from ``docs`` (Python lists of token ids) from document
    ``start`` on: each token's id, its position in its document and its label (the next token of the same
    document, else ignored). Returns ``(batch, next_start)``; the per-token Python loop is the host work."""
    ids, pos, labels = [], [], []
    j = start
    for _ in range(seqs):
        r_ids, r_pos, r_lab = [], [], []
        while len(r_ids) < seq:
            doc = docs[j % len(docs)]
            j += 1
            n = min(len(doc), seq - len(r_ids))
            for k in range(n):
                r_ids.append(doc[k])
                r_pos.append(k)
                r_lab.append(doc[k + 1] if k + 1 < len(doc) else IGNORE)
        ids.append(r_ids)
        pos.append(r_pos)
        labels.append(r_lab)
    return torch.tensor([ids, pos, labels]), j


def make(variant: str, rank: int, world: int, cuda: bool, **sizes):
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, t, v, d, hid, layers = (SEQS, SEQ, VOCAB, WIDTH, HIDDEN, LAYERS) if cuda else (2, 16, 50, 8, 16, 2)
    b, t, log_every = sizes.get("seqs", b), sizes.get("seq", t), sizes.get("log_every", LOG_EVERY)
    g = torch.Generator().manual_seed(0)  # the documents and the parameters, the same on every rank
    lens = torch.randint(t // 16, 3 * t // 4, (DOCS,), generator=g).tolist()
    docs = [torch.randint(0, v, (n,), generator=g).tolist() for n in lens]  # pre-tokenized
    mine = docs[rank::world]  # each rank its own documents
    params = [
        (torch.randn(v, d, generator=g) * 0.5).to(dev, dt),
        (torch.randn(t, d, generator=g) * 0.1).to(dev, dt),
    ]
    for _ in range(layers):
        params += [
            (torch.randn(hid, d, generator=g) / d**0.5).to(dev, dt),
            (torch.randn(d, hid, generator=g) / hid**0.5 * 0.5).to(dev, dt),
        ]
    for p in params:
        p.requires_grad_()
    sizes_ = [p.numel() for p in params]
    history: list = []  # the logged global loss per step
    pending: list = []  # the good variant's losses not yet logged, on the GPU
    state = {"i": 0, "doc": 0}

    def log(losses):  # the global mean loss of each step, read on the host
        t_ = torch.stack(losses)
        dist.all_reduce(t_)
        history.extend((t_ / world).tolist())

    def loop(steps: int) -> None:
        for _ in range(steps):
            state["i"] += 1
            with kprof.range("step"):
                batch, state["doc"] = pack(mine, state["doc"], b, t)
                if cuda:
                    batch = batch.pin_memory()
                batch = batch.to(dev, non_blocking=True)
                ids, pos, labels = batch[0], batch[1], batch[2]
                emb, pemb = params[0], params[1]
                h = F.embedding(ids, emb) + F.embedding(pos, pemb)
                for i in range(layers):
                    w1, w2 = params[2 + 2 * i : 4 + 2 * i]
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
                if variant == "bad":  # every step: the host waits for the GPU (and the other rank)
                    lv = loss.detach().clone()
                    dist.all_reduce(lv)
                    history.append(lv.item() / world)
                else:
                    pending.append(loss.detach())
                    if len(pending) == log_every:
                        log(pending)
                        pending.clear()

    def output():
        if pending:
            log(pending)
            pending.clear()
        with torch.no_grad():
            total = torch.stack([p.float().sum() for p in params]).sum()
        return torch.cat([torch.tensor(history, dtype=torch.float32), total.reshape(1).float().cpu()])

    return loop, output


if __name__ == "__main__":
    main(__doc__, make)
