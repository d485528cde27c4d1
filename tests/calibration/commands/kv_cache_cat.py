"""A KV cache grown with ``torch.cat`` at every decoded token (the "dynamic cache" of a hand-written or
older generation loop): each new token's key and value are appended by concatenation, so every step
allocates a cache one token longer and copies the whole cache into it, then attention reads it again
(CUDA C++ Best Practices Guide, "Minimize data transfer": do not move data that does not change; the
static, preallocated caches of inference engines and Hugging Face's StaticCache). Nothing fails and the
values are right. The fix is one change: the cache allocated once at its final length and each new
token's key and value written into its slot (attention over the filled prefix, a view).

Stage ``decode`` (one ``kprof.range`` per step): 8 decoded tokens of a batch of 32 sequences, 32 heads of
128 (bf16), after a 2048-token prompt whose keys and values are the cache's first 2048 positions: per
token, F.scaled_dot_product_attention of the token's query over the cache. Each step restarts from the
same prompt (the bad variant's cache from the prompt's tensors by concatenation, the good variant's
slots overwritten), so every step does the same work. The model is attention reading the cache once per
token and the new keys, values, queries and outputs moved once: bytes 2·2·B·H·D·Σ(T0+i+1) + 8·4·2·B·H·D =
8.62e9; FLOPs 4·B·H·D·Σ(T0+i+1) = 8.61e9 (tensor cores, bf16).

Per design (H100 SXM): good ~3 ms per step (8.6 GB at ~3 TB/s); bad adds the copies, a read and a write
of the 1.07 GB cache per token: ~3x the bytes → ~8-9 ms.

Measured (H200, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 6376 µs (16
CatArrayBatchedCopy kernels and 8 cuDNN flash-attention kernels per step), good 2059 µs (16 slot writes, the
same 8 attention kernels): +210 %. The variants' kept outputs are identical.

    python kv_cache_cat.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, HEADS, HEAD_DIM, PROMPT, TOKENS = 32, 32, 128, 2048, 8


def make(variant: str, cuda: bool):
    """The step's loop and the attention outputs it keeps (the last token's, per step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, h, d, t0, n = (BATCH, HEADS, HEAD_DIM, PROMPT, TOKENS) if cuda else (2, 2, 8, 16, 4)
    g = torch.Generator(device=dev).manual_seed(0)

    def rnd(*shape):
        return torch.randn(*shape, device=dev, generator=g).to(dt)

    k0, v0 = rnd(b, h, t0, d), rnd(b, h, t0, d)  # the prompt's keys and values
    q, kn, vn = rnd(n, b, h, 1, d), rnd(n, b, h, 1, d), rnd(n, b, h, 1, d)  # the decoded tokens'
    kept: list = []
    if variant == "good":
        kc, vc = k0.new_empty(b, h, t0 + n, d), v0.new_empty(b, h, t0 + n, d)  # the cache at its final length
        kc[:, :, :t0], vc[:, :, :t0] = k0, v0

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("decode"):
                if variant == "bad":
                    k, v = k0, v0
                for i in range(n):
                    if variant == "bad":
                        k, v = torch.cat([k, kn[i]], dim=2), torch.cat([v, vn[i]], dim=2)
                    else:
                        kc[:, :, t0 + i : t0 + i + 1], vc[:, :, t0 + i : t0 + i + 1] = kn[i], vn[i]
                        k, v = kc[:, :, : t0 + i + 1], vc[:, :, : t0 + i + 1]
                    out = F.scaled_dot_product_attention(q[i], k, v)
                kept.append(out.clone())

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
