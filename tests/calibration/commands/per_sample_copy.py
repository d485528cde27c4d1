"""A training-style loop whose batch arrives as a list of per-sample CPU tensors (what a Dataset's
``__getitem__`` returns) and is moved to the GPU one sample at a time, ``torch.stack([s.to("cuda") for s
in samples])``: 256 small pageable host-to-device copies per step, each a separate cudaMemcpy with its own
fixed cost (API call, staging, a wait for the stream), none overlapping the GPU's work (CUDA C++ Best
Practices Guide, "Data transfer between host and device": batch many small transfers into one larger
transfer). Nothing fails and the values are right. The fix is one change: the samples stacked on the host
first, ``torch.stack(samples).to("cuda")``: one 2 MB copy.

Stage ``step`` (one ``kprof.range`` per step): B = 256 samples of T = 1024 int64 token ids (vocabulary
32000; 4 batches cycled), an embedding of width D = 512 and a residual MLP (D → 1024 → D, GELU) in bf16, the
sequence mean kept. The model: the two GEMMs, 2·2·B·T·D·1024 = 5.5e11 FLOPs (tensor cores, bf16); the ids
(2 MB), the gathered embedding rows, the weights and the kept means moved once, and the activations once
each way through the MLP (the embedding's output, the 1024-wide hidden layer, the second GEMM's output):
2.42e9 bytes.

Per design (H100 SXM): good ~1-1.5 ms per step (the MLP, a 2 MB copy and the host's stack); bad 256 copies
at ~10-15 µs each, ~3-4 ms in which the GPU idles.

Measured (H100, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 6430 µs (256 pageable
HtoD memcpys and 2 CatArrayBatchedCopy kernels per step), good 2759 µs (one memcpy): +133 %. The kept outputs
are identical.

    python per_sample_copy.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, SEQ, VOCAB, WIDTH, HIDDEN, BATCHES = 256, 1024, 32000, 512, 1024, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's sequence means), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, t, v, d, hid = (BATCH, SEQ, VOCAB, WIDTH, HIDDEN) if cuda else (4, 16, 50, 8, 16)
    g = torch.Generator().manual_seed(0)
    # each batch a list of per-sample tensors, as a Dataset returns them
    batches = [list(torch.randint(0, v, (b, t), generator=g).unbind(0)) for _ in range(BATCHES)]
    emb = (torch.randn(v, d, generator=g) * 0.5).to(dev, dt)
    w1 = (torch.randn(hid, d, generator=g) / d**0.5).to(dev, dt)
    w2 = (torch.randn(d, hid, generator=g) / hid**0.5).to(dev, dt)
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            samples = batches[state["i"] % BATCHES]
            state["i"] += 1
            with kprof.range("step"):
                if variant == "bad":
                    ids = torch.stack([s.to(dev) for s in samples])
                else:
                    ids = torch.stack(samples).to(dev)
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
