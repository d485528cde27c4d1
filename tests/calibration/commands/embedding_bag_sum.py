"""Bags of embeddings summed by gathering every row into a [B, L, D] tensor and reducing it
(``F.embedding(idx, table).sum(1)``: the gathered rows written to device memory, then read back by the sum) where
``F.embedding_bag(idx, table, mode="sum")`` serves: one kernel gathers each bag's rows and accumulates them on
chip, only the [B, D] sums written. The pattern is the bag-of-words / multi-hot feature layer of recommendation
and text models (DLRM's sparse features, fastText, YouTube-DNN's watched-video average), written with the plain
embedding and a reduction. Sources: the torch.nn.EmbeddingBag documentation ("computes sums or means of 'bags' of
embeddings, without instantiating the intermediate embeddings": "with mode="sum" is equivalent to Embedding
followed by torch.sum(dim=1)" and more efficient); M. Naumov et al., "Deep Learning Recommendation Model for
Personalization and Recommendation Systems" (2019: EmbeddingBag for the sparse features); the CUDA C++ Best
Practices Guide, "Memory Optimizations" (keep intermediate data on chip).

Stage ``step`` (one ``kprof.range`` per step, inference): the sums of B = 8192 bags of L = 64 rows of a table of
8192 x 256 fp32 (8 MB: it stays in L2) for one of two index sets (int64, used in turn), two values kept. Bad:
F.embedding(idx, table).sum(1) (537 MB written and read back). Good: F.embedding_bag(idx, table, mode="sum").
The same sums to fp32 rounding (another order of the adds).

Model (the needed work): FLOPs one add a gathered element, 1.3e8 a step; bytes the indices read (4 MB), the rows
gathered (537 MB, from L2) and the [B, D] sums written (8 MB): 1.2e7 through DRAM a step.

Per design (H100/H200): the good step ~70-110 us (the gather from L2 and 8 MB written); the bad ~0.25-0.4 ms
(the [8192, 64, 256] intermediate, 537 MB, written to DRAM by the gather and read back by the sum): ~3-4x. The
extra time is the intermediate's round trip through DRAM between two kernels where one keeps it on chip (cause
"fusion"; resource "dram").

    python embedding_bag_sum.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

V, D, B, L, NX = 8192, 256, 8192, 64, 2


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (two values a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    v, d, b, bag = (V, D, B, L) if cuda else (50, 8, 12, 5)
    g = torch.Generator(device=dev).manual_seed(0)
    table = torch.randn(v, d, generator=g, device=dev)
    idxs = [torch.randint(0, v, (b, bag), generator=g, device=dev) for _ in range(NX)]
    kept: list = []
    it = [0]

    if variant == "bad":

        def bags(idx):
            return F.embedding(idx, table).sum(1)  # [B, L, D] written, then read back

    else:

        def bags(idx):
            return F.embedding_bag(idx, table, mode="sum")  # accumulated on chip

    def step():
        y = bags(idxs[it[0] % NX])
        it[0] += 1
        return torch.stack([y[0, 0], y[-1, -1]])

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(step())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
