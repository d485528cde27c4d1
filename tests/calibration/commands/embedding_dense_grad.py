"""A recommender-style training loop whose 8M-row embedding table is an ``nn.Embedding`` with dense gradients
(``sparse=False``, the default): each step looks up 16384 rows, but the backward writes a gradient the size of
the whole table (a 2 GB zero fill, then the looked-up rows accumulated into it) and SGD reads and rewrites every
row of the table with it, ~8 GB of DRAM traffic a step for 16384 rows' worth of update (PyTorch's nn.Embedding
docs: sparse=True gives a sparse gradient, for optimizers that take one: SGD, SparseAdam, Adagrad; CUDA C++ Best
Practices Guide: minimise data transfer, do the least work that gives the result). Nothing fails and the values
are right (untouched rows get a zero gradient: no change). The fix is one change: ``sparse=True``.

Stage ``step`` (one ``kprof.range`` per step): ids [16384] (uniform over the 8M rows, a new batch each step),
their 64-float32 rows through Linear 64 → 256, ReLU, Linear 256 → 1, MSE against a target, backward, SGD
(lr 0.05, no momentum) over the table and the MLP. The model: what the update needs: the looked-up rows read
forward and backward, their gradient rows written and read, the table's rows rewritten (16384 · 256 B · 5),
the MLP's work (3·2·16384·(64·256 + 256) = 1.6e9 FLOPs, fp32): bytes 2.2e7.

Per design (H100 SXM): bad ~2 GB zero fill + ~6 GB of SGD over the table → ~2.7 ms a step at ~3 TB/s; good:
the sparse gradient's coalesce (a sort of 16384 ids) and an index_add of 16384 rows: ~0.3 ms, mostly launches:
~5-10x. The bad step is DRAM-bound (resource "dram"), on work the result does not need (cause "move_work": the
zero rows' update).

Measured (H100, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 3.54 ms (79 GPU ops a step,
the recorded profile's total 3381 µs), good 1.12 ms (27 GPU ops, the profile's total 225 µs: host-paced): +217 %. The kept losses are
identical.

    python embedding_dense_grad.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

ROWS, DIM, BATCH, HIDDEN = 1 << 23, 64, 16384, 256


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    rows, dim, b, hidden = (ROWS, DIM, BATCH, HIDDEN) if cuda else (1000, 8, 64, 16)
    g = torch.Generator(device=dev).manual_seed(0)
    # The planted switch: the table's gradient dense (the default) or sparse.
    emb = torch.nn.Embedding(rows, dim, sparse=variant == "good", device=dev)
    with torch.no_grad():
        emb.weight.copy_(torch.randn(rows, dim, generator=g, device=dev) * 0.1)
    mlp = torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1)).to(
        dev
    )
    with torch.no_grad():
        for p in mlp.parameters():
            p.copy_(torch.randn(p.shape, generator=g, device=dev) * 0.1)
    opt = torch.optim.SGD([emb.weight, *mlp.parameters()], lr=0.05)
    batches = [
        (
            torch.randint(0, rows, (b,), generator=g, device=dev),
            torch.randn(b, 1, generator=g, device=dev),
        )
        for _ in range(8)
    ]
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            ids, target = batches[state["i"] % len(batches)]
            state["i"] += 1
            with kprof.range("step"):
                loss = F.mse_loss(mlp(emb(ids)), target)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                kept.append(loss.detach())

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
