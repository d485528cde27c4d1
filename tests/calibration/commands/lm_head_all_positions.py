"""Next-token logits computed for every position of the prompt when only the last is used: the LM head
(hidden states [B, T, d] @ Wᵀ, W [V, d], bf16) run over all B·T positions and the result sliced to the
last position afterwards (``lm_head(h)[:, -1]``), the pattern of a generation loop's prefill written
from a training forward (Hugging Face added ``logits_to_keep`` for it; inference engines gather the last
positions first). The GEMM is dense and fast; 1023 of every 1024 rows it computes are thrown away. The
fix is one change: the slice before the head, ``lm_head(h[:, -1])``.

Stage ``lm_head`` (one ``kprof.range`` per step): a batch of 8 prompts of 1024 tokens, width 4096, a
32000-token vocabulary (Llama-sized), the last position's logits kept (on the GPU). The model is the
work the step needs: the last positions' logits, FLOPs 2·8·4096·32000 = 2.10e9 (tensor cores, bf16),
bytes W read once, the 8 hidden rows read and the 8 logit rows written once: (32000·4096 + 8·4096 +
8·32000)·2 = 2.63e8.

Per design (H100 SXM): bad ~3.5-4 ms per step (2.15e12 FLOPs near the bf16 tensor roof, and 524 MB of
logits written); good ~0.1 ms (a GEMV reading W's 262 MB): ~30x.

Measured (H200, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 3166 µs (cuBLAS
nvjet_sm90_tst_320x128 over 8192 rows), good 72.9 µs (nvjet_sm90_tst_256x8): +4242 %. The variants' kept
logits are identical.

    python lm_head_all_positions.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, SEQ, WIDTH, VOCAB = 8, 1024, 4096, 32000


def make(variant: str, cuda: bool):
    """The step's loop and the logits it keeps (the last position's, per step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, t, d, vocab = (BATCH, SEQ, WIDTH, VOCAB) if cuda else (2, 16, 32, 100)
    g = torch.Generator(device=dev).manual_seed(0)
    hs = [torch.randn(b, t, d, device=dev, generator=g).to(dt) for _ in range(2)]
    w = (torch.randn(vocab, d, device=dev, generator=g) / d**0.5).to(dt)
    it = [0]
    kept: list = []

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("lm_head"):
                h = hs[it[0] % len(hs)]
                if variant == "bad":
                    logits = F.linear(h, w)[:, -1]
                else:
                    logits = F.linear(h[:, -1], w)
                kept.append(logits.clone())  # stays on the GPU (a copy: a view would keep all logits)
                it[0] += 1

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
