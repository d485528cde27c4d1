"""A data-parallel language-model training loop on 2 ranks (NCCL, one GPU each) in which rank 0 alone
computes the validation loss over a fixed held-out set after every step (``if rank == 0: evaluate()``, for a
smooth validation curve), while rank 1 goes on to the next step and waits at its gradients' all-reduce for
rank 0. Rank 0 is the straggler, by GPU work that only it does; rank 1's GPU idles. Nothing fails and the
values are right. The fix is one change: the held-out set split between the ranks, each evaluating its
half every step (what a DistributedSampler over the validation set gives), the partial sums kept per rank.

Stage ``step`` (one ``kprof.range`` per step on each rank): 4 sequences of 1024 tokens a rank, an embedding
of width 1024 (vocabulary 8192) tied to the output layer, 4 residual MLP layers (1024 → 4096 → 1024, GELU)
in bf16, next-token cross-entropy, backward, one all-reduce of the flat gradients (42 M bf16), SGD; then the
evaluation: forward passes without gradients over 32 held-out sequences of 1024 tokens (in chunks of 4
sequences), the cross-entropy summed. Per token forward ~2 · (33.5 M + 8.4 M) = 8.4e7 FLOPs: the training
step 3 · 4096 · 8.4e7 = 1.0e12 FLOPs a rank, the whole evaluation 32768 · 8.4e7 = 2.8e12.

Per design (2 x H100 SXM, NVLink): the training step ~2.5 ms, the whole evaluation ~5 ms: bad ~7.5 ms per
step (rank 0's training and evaluation; rank 1 waits), good ~5 ms (training and half the evaluation on
each rank): ~1.5x.

The kept outputs (each rank's training loss per step, its partial sum of the validation loss per step and
its parameters' sum at the end) agree: the training losses and parameters identical in both variants, the
validation sums, summed over the ranks, to rounding (the same chunks, summed in another order).

    python ranks2_rank0_eval.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from _ranks import main

import kprof

SEQS, SEQ, VOCAB, WIDTH, HIDDEN, LAYERS, VAL_SEQS, CHUNK, BATCHES, LR = (
    4,
    1024,
    8192,
    1024,
    4096,
    4,
    32,
    4,
    4,
    1e-2,
)


def eval_chunks(variant: str, rank: int, world: int, n_chunks: int) -> list:
    """The held-out chunks ``rank`` evaluates: all of them on rank 0, or every world-th chunk."""
    if variant == "bad":
        return list(range(n_chunks)) if rank == 0 else []
    return list(range(rank, n_chunks, world))


def make(variant: str, rank: int, world: int, cuda: bool, **sizes):
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, t, v, d, hid, layers, nval, chunk = (
        (SEQS, SEQ, VOCAB, WIDTH, HIDDEN, LAYERS, VAL_SEQS, CHUNK) if cuda else (2, 16, 50, 8, 16, 2, 8, 2)
    )
    g = torch.Generator().manual_seed(0)  # the parameters and the held-out set, the same on every rank
    params = [(torch.randn(v, d, generator=g) * 0.5).to(dev, dt)]
    for _ in range(layers):
        params += [
            (torch.randn(hid, d, generator=g) / d**0.5).to(dev, dt),
            (torch.randn(d, hid, generator=g) / hid**0.5 * 0.5).to(dev, dt),
        ]
    for p in params:
        p.requires_grad_()
    val = torch.randint(0, v, (nval, t + 1), generator=g).to(dev)
    chunks = val.split(chunk)
    mine = eval_chunks(variant, rank, world, len(chunks))
    gr = torch.Generator().manual_seed(1 + rank)  # each rank its own training data
    batches = [torch.randint(0, v, (b, t + 1), generator=gr).to(dev) for _ in range(BATCHES)]
    sizes_ = [p.numel() for p in params]
    kept: list = []
    val_kept: list = []
    state = {"i": 0}

    def forward(ids):
        emb = params[0]
        h = F.embedding(ids, emb)
        for i in range(layers):
            w1, w2 = params[1 + 2 * i : 3 + 2 * i]
            h = h + F.linear(F.gelu(F.linear(h, w1)), w2)
        return F.linear(h, emb).float()

    def evaluate():  # the summed validation loss over this rank's held-out chunks
        total = torch.zeros((), device=dev)
        with torch.no_grad():
            for j in mine:
                c = chunks[j]
                total += F.cross_entropy(
                    forward(c[:, :-1]).reshape(-1, v), c[:, 1:].reshape(-1), reduction="sum"
                )
        return total

    def loop(steps: int) -> None:
        for _ in range(steps):
            x = batches[state["i"] % BATCHES]
            state["i"] += 1
            with kprof.range("step"):
                loss = F.cross_entropy(forward(x[:, :-1]).reshape(-1, v), x[:, 1:].reshape(-1))
                loss.backward()
                flat = torch.cat([p.grad.reshape(-1) for p in params])
                dist.all_reduce(flat)
                with torch.no_grad():
                    upd = [u.view_as(p) for u, p in zip(flat.split(sizes_), params)]
                    torch._foreach_add_(params, upd, alpha=-LR / world)
                for p in params:
                    p.grad = None
                kept.append(loss.detach())
                val_kept.append(evaluate())  # bad: rank 0 alone; good: each rank its half

    def output():
        with torch.no_grad():
            total = torch.stack([p.float().sum() for p in params]).sum()
        return torch.cat(
            [torch.stack(kept).float().cpu(), torch.stack(val_kept).cpu(), total.reshape(1).cpu()]
        )

    return loop, output


if __name__ == "__main__":
    main(__doc__, make)
