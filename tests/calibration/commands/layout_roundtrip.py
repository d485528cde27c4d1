"""A stack of LayerNorms on activations kept channels-first, [B, C, L] (the layout a conv or audio
front end produced), each layer converting to channels-last and back: ``x.transpose(1, 2)
.contiguous()``, ``F.layer_norm`` over C, ``.transpose(1, 2).contiguous()``. Every layer pays two
transposing copies of the whole tensor around one memory-bound kernel: three passes over the
data where one is needed. The fix converts once, before the loop, and keeps the activations
channels-last, [B, L, C], the layout the layers want (CUDA C++ Best Practices Guide: minimise
device-memory traffic; PyTorch's channels_last guidance: convert the layout once, not per op).

Stage ``step`` (one ``kprof.range`` per step): LAYERS = 4 LayerNorms over C = 1024 on B·L = 16·2048
positions, bf16: each reads and writes the tensor once, 4 · 2 · 16·1024·2048 · 2 B = 5.37e8 bytes
(about 8 FLOPs per element per layer, 1.07e9 FLOPs); the bad variant moves three times the bytes.

Measured (H100 SXM, torch 2.11, 2026-11-25, wall time per step as record.py times it): bad 2233 µs, good
319 µs (+600 %; each transposing copy costs more than its LayerNorm). Both variants' outputs identical.

    python layout_roundtrip.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

LAYERS = 4


def make(variant: str, cuda: bool):
    """The step's loop and its output (channels-first, as the data came), for ``variant``."""
    dev, dt = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    b, c, length = (16, 1024, 2048) if cuda else (2, 32, 24)
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(b, c, length, device=dev, generator=g).to(dt)  # channels-first, as produced
    ws = [(1.0 + 0.1 * torch.randn(c, device=dev, generator=g)).to(dt) for _ in range(LAYERS)]
    bs = [(0.1 * torch.randn(c, device=dev, generator=g)).to(dt) for _ in range(LAYERS)]
    state = [x if variant == "bad" else x.transpose(1, 2).contiguous()]  # good: channels-last once

    def step(h):
        for w, bias in zip(ws, bs):
            if variant == "bad":
                t = h.transpose(1, 2).contiguous()  # [B, L, C] for layer_norm over C
                t = torch.nn.functional.layer_norm(t, (c,), w, bias)
                h = t.transpose(1, 2).contiguous()  # back to [B, C, L]
            else:
                h = torch.nn.functional.layer_norm(h, (c,), w, bias)
        return h

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                state[0] = step(state[0])

    def output():
        h = state[0]
        return h if variant == "bad" else h.transpose(1, 2)

    return loop, output


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output().float()).all(), "non-finite output"


if __name__ == "__main__":
    main()
