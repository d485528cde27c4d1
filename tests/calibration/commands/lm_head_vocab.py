"""An LM head whose vocabulary size is not a multiple of 8: GPT-2's 50257 tokens. The logits GEMM
(x [tokens, 768] @ Wᵀ, W [50257, 768], bf16) writes a [tokens, 50257] output whose rows are
100,514 bytes apart, not a multiple of 16 bytes, so cuBLAS cannot use its aligned (vectorised, TMA)
kernels for the output and falls back to a slower kernel (CUDA C++ Best Practices Guide and the
cuBLAS/Tensor Core performance guides: keep GEMM dimensions multiples of 8 for fp16/bf16; the
padded-vocabulary trick of nanoGPT, 50257 → 50304). Nothing fails and the values are right. The fix
is one change: the weight padded with zero rows to 50304 (a multiple of 64) and the extra logits
ignored (``logits[:, :50257]``).

Stage ``lm_head`` (one ``kprof.range`` per step): the logits of 8192 tokens (a batch of 8 sequences
of 1024 in a perplexity evaluation), the last token's logits kept (on the GPU). The model is the
unpadded GEMM: FLOPs 2·8192·50257·768 = 6.32e11 (tensor cores, bf16); bytes x and W read once, the
logits written once: (8192·768 + 50257·768 + 8192·50257)·2 = 9.13e8.

Measured (H100 SXM, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 6422 µs (cuBLAS
runs cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1), good 996 µs (nvjet_sm90_tst_192x192_64x4):
+545 %. The variants' kept logits agree to 0.0078 (of ~5, bf16).

    python lm_head_vocab.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

VOCAB, VOCAB_PADDED, WIDTH = 50257, 50304, 768


def make(variant: str, cuda: bool):
    """The step's loop and the logits it keeps (the last token's, per step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    tokens, vocab, width = (8192, VOCAB, WIDTH) if cuda else (64, 257, 32)
    padded = VOCAB_PADDED if cuda else 320
    g = torch.Generator(device=dev).manual_seed(0)
    xs = [torch.randn(tokens, width, device=dev, generator=g).to(dt) for _ in range(2)]
    w = (torch.randn(vocab, width, device=dev, generator=g) / width**0.5).to(dt)
    if variant == "good":
        w = torch.cat([w, w.new_zeros(padded - vocab, width)])  # the vocabulary padded to a multiple of 64
    it = [0]
    kept: list = []

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("lm_head"):
                logits = F.linear(xs[it[0] % len(xs)], w)[:, :vocab]
                kept.append(logits[-1].clone())  # stays on the GPU (a copy: the view would keep all logits)
                it[0] += 1

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
