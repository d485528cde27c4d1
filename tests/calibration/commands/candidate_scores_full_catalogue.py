"""The scores of each user's candidate items (the ranking stage of a two-stage recommender: a few hundred
retrieved candidates per user re-scored against the user's embedding) computed by scoring the whole item
catalogue, ``(U @ E.T).gather(1, cand)`` (a [B, NI] matrix product over all NI items, then K of the NI columns
kept), where gathering the candidates' embeddings and one batched dot product serves
(``torch.einsum('bd,bkd->bk', U, E[cand])``: B x K dot products of length D). Sources: P. Covington et al.,
"Deep Neural Networks for YouTube Recommendations" (RecSys 2016: candidate generation, then ranking of a few
hundred candidates); X. Yi et al., "Sampling-Bias-Corrected Neural Modeling for Large Corpus Item
Recommendations" (RecSys 2019: two-tower scoring); the torch.gather and torch.einsum documentation; the PyTorch
performance tuning guide (avoid work whose result is discarded).

Stage ``step`` (one ``kprof.range`` per step, inference): bf16 user embeddings U [1024, 1024] (two batches, used
in turn), a catalogue of NI = 131072 bf16 item embeddings E [NI, 1024] (256 MiB), K = 32 candidate ids per
user (int64, random); the [1024, 32] scores kept (two values a step). Bad: U @ E.T (a [1024, 131072] bf16
product, 2.7e11 FLOPs, its 256 MiB output written) and a gather of the candidates' columns. Good: E[cand] (a
[1024, 32, 1024] gather, 64 MiB) and einsum('bd,bkd->bk') (a batched product, 6.7e7 FLOPs). The same scores
to bf16 rounding (fp32 on the CPU check).

Model (the needed work): FLOPs 2 B K D = 6.7e7 a step; bytes U, the candidates' embedding rows and the scores:
~7e7 a step.

Per design (H100/H200): the good step ~40-60 us (the gather's 64 MiB read and written, the batched product
reading it again; GPU-bound, four kernels); the bad ~0.35-0.45 ms (2.7e11 bf16 FLOPs on the tensor cores at
~600-800 TFLOP/s, its output's 256 MiB written alongside): ~6-10x. The extra time is the product with every
item of the catalogue, 4096 times the candidates' columns (cause "move_work": the needed scores by a costlier
method; resource "tensor").

    python candidate_scores_full_catalogue.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

B, D, NI, K, NU = 1024, 1024, 131072, 32, 2


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (two scores a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, d, ni, k = (B, D, NI, K) if cuda else (8, 32, 500, 5)
    dt = torch.bfloat16 if cuda else torch.float32
    g = torch.Generator(device=dev).manual_seed(0)
    us = [(torch.randn(b, d, generator=g, device=dev) / d**0.5).to(dt) for _ in range(NU)]
    emb = torch.randn(ni, d, generator=g, device=dev).to(dt)
    cands = [torch.randint(0, ni, (b, k), generator=g, device=dev) for _ in range(NU)]
    kept: list = []
    it = [0]

    if variant == "bad":

        def score(u, c):
            return (u @ emb.T).gather(1, c)  # every item of the catalogue scored, K columns kept

    else:

        def score(u, c):
            return torch.einsum("bd,bkd->bk", u, emb[c])  # the candidates' rows only

    def step():
        i = it[0] % NU
        it[0] += 1
        s = score(us[i], cands[i])
        return torch.stack([s[0, 0], s[-1, -1]]).float()

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
