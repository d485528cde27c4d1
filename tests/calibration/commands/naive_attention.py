"""Causal self-attention written out by hand (the manual path of many a model file): ``att = (q @
k.transpose(-2, -1)) * scale``, ``masked_fill`` with the causal mask, ``softmax``, ``att @ v``. Every
step materialises the [B, H, T, T] score matrix in device memory and passes it through four kernels
besides the two GEMMs (scale, mask, softmax, each reading and writing it), and the GEMMs compute the
masked upper half too. The fix is one call, ``F.scaled_dot_product_attention(q, k, v,
is_causal=True)``: a fused (flash) kernel that keeps each tile of scores on chip (CUDA C++ Best
Practices Guide: minimise device-memory traffic, use shared memory for data reused within a block;
FlashAttention).

Stage ``step`` (one ``kprof.range`` per step): B = 16, H = 16, T = 1024, head dim 64, bf16; the model
is the attention's work: FLOPs 4·B·H·T²·d/2 = 3.44e10 (the causal half, tensor cores), bytes q, k, v
read and y written once, 4·B·H·T·d·2 = 1.34e8. The scores are 268M elements (537 MB in bf16): the bad
variant moves them ~8 times (the first GEMM's write, scale, mask and softmax reading and writing, the
second GEMM's read), ~4.3 GB per step.

Measured (H100 SXM, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 2491 µs, good
106 µs (+2245 %). The variants' outputs agree to 0.016 (bf16; of ~4.6).

    python naive_attention.py --variant bad --steps 20
"""

from __future__ import annotations

import math

import torch
from _common import parser, run

import kprof


def make(variant: str, cuda: bool):
    """The step's loop and its last output, for ``variant``."""
    dev, dt = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    b, h, t, d = (16, 16, 1024, 64) if cuda else (2, 3, 40, 8)
    g = torch.Generator(device=dev).manual_seed(0)
    q, k, v = (torch.randn(b, h, t, d, device=dev, generator=g).to(dt) for _ in range(3))
    causal = torch.tril(torch.ones(t, t, dtype=torch.bool, device=dev))
    scale = 1.0 / math.sqrt(d)
    last: list = [None]

    def attention(q, k, v):
        if variant == "good":
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        att = (q @ k.transpose(-2, -1)) * scale
        att = att.masked_fill(~causal, float("-inf"))
        att = torch.softmax(att, dim=-1)
        return att @ v

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                last[0] = attention(q, k, v)

    return loop, (lambda: last[0].float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
