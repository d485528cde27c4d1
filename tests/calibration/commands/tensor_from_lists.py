"""An evaluation loop whose batches of token ids are kept as Python lists (a tokenizer's output, a JSON
dataset) and turned into a tensor every step with ``torch.tensor(batch, device="cuda")``: the host walks
B·T Python ints one by one to build the tensor, then a pageable copy, before the step's kernels can be
launched, and the step's GPU work is shorter than that conversion (CUDA C++ Best Practices Guide: keep
the host off the critical path, do host-side preparation once; PyTorch's guidance: build tensors from
arrays, not from nested Python lists). Nothing fails and the values are right. The fix is one change: the
dataset converted to a tensor once, before the loop (pinned), each step's batch sliced from it and copied
with non_blocking=True.

Stage ``step`` (one ``kprof.range`` per step): a batch of B = 64 sequences of T = 2048 token ids
(vocabulary 32000; 4 batches cycled), an embedding of width D = 512 and a residual MLP (D → 2048 → D,
GELU) in bf16, the sequence mean kept. The model: the two GEMMs, 2·2·B·T·D·2048 = 5.5e11 FLOPs (tensor
cores, bf16); the ids, the gathered embedding rows, the weights and the kept means moved once, and the
activations once each way through the MLP (the embedding's output, the 2048-wide hidden layer, the second
GEMM's output): 1.75e9 bytes.

Per design (H100 SXM): good ~1.5 ms per step (two 275-GFLOP GEMMs and their memory-bound neighbours); bad
adds torch.tensor over 131072 Python ints, ~4-8 ms of host time in which the GPU has nothing to do.

Measured (H100, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 18956 µs, good 2076 µs
(+813 %; the same 11 kernels and copies per step, the bad one's copy pageable). The kept outputs are identical.

    python tensor_from_lists.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, SEQ, VOCAB, WIDTH, HIDDEN, BATCHES = 64, 2048, 32000, 512, 2048, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's sequence means), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, t, v, d, hid = (BATCH, SEQ, VOCAB, WIDTH, HIDDEN) if cuda else (2, 16, 50, 8, 16)
    g = torch.Generator().manual_seed(0)
    batches = torch.randint(0, v, (BATCHES, b, t), generator=g).tolist()  # Python lists, as tokenized
    emb = (torch.randn(v, d, generator=g) * 0.5).to(dev, dt)
    w1 = (torch.randn(hid, d, generator=g) / d**0.5).to(dev, dt)
    w2 = (torch.randn(d, hid, generator=g) / hid**0.5).to(dev, dt)
    if variant == "good":
        data = torch.tensor(batches)  # converted once, before the loop
        data = data.pin_memory() if cuda else data
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            i = state["i"] % BATCHES
            state["i"] += 1
            with kprof.range("step"):
                if variant == "bad":
                    ids = torch.tensor(batches[i], device=dev)
                else:
                    ids = data[i].to(dev, non_blocking=True)
                h = F.embedding(ids, emb)
                h = h + F.linear(F.gelu(F.linear(h, w1)), w2)
                kept.append(h.float().mean(dim=1))

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
