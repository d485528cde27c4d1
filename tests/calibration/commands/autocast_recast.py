"""A decode-style inference loop whose weights were loaded as an fp32 checkpoint and are run in bf16 by
wrapping each step in ``torch.autocast("cuda", dtype=torch.bfloat16)``. Autocast casts an op's inputs when the
op runs (PyTorch's AMP notes: the cast copies are cached only within one autocast region and only for leaf
tensors that require grad): every step, every F.linear first writes a bf16 copy of its fp32 weight (read 64
MB, write 32 MB) and the GEMM then reads that copy. Nothing fails and the values are the same. The fix is one
change: the weights cast to bf16 once before the loop, the step run without autocast (the same bf16 GEMMs).

Stage ``step`` (one ``kprof.range`` per step): 16 tokens through 16 Linear layers of 4096 x 4096 (no bias)
with a residual add each, the last hidden state kept. The model: the GEMMs, 16·2·16·4096·4096 = 8.59e9 FLOPs
(tensor cores, bf16); the bf16 weights read once, 16·32 MB = 537 MB (the activations, 128 KB each, aside):
5.37e8 bytes.

Per design (H100 SXM): good ~0.2 ms per step (the weights at the DRAM's rate; 32 small kernels); bad: 16
casts of 96 MB of traffic each on top, ~2.1 GB a step → ~0.7 ms: ~3.5x. The limiter is the DRAM (resource
"dram") in both; the fix moves the casts out of the loop (cause "move_work").

    python autocast_recast.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

TOKENS, WIDTH, LAYERS = 16, 4096, 16


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's last hidden state), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    t, d, layers = (TOKENS, WIDTH, LAYERS) if cuda else (4, 32, 3)
    g = torch.Generator().manual_seed(0)
    # the checkpoint's fp32 weights
    weights = [(torch.randn(d, d, generator=g) / d**0.5 * 0.5).to(dev) for _ in range(layers)]
    xs = [torch.randn(t, d, generator=g).to(dev, torch.bfloat16) for _ in range(4)]
    if variant == "good":
        weights = [w.to(torch.bfloat16) for w in weights]  # cast once, before the loop
    kept: list = []
    state = {"i": 0}

    def forward(x):
        h = x
        for w in weights:
            h = h + F.linear(h, w)
        return h

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                x = xs[state["i"] % len(xs)]
                state["i"] += 1
                with kprof.range("step"):
                    if variant == "bad":
                        with torch.autocast(dev, dtype=torch.bfloat16):
                            h = forward(x)
                    else:
                        h = forward(x)
                    kept.append(h)

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
