"""A decode-style inference loop whose weights were loaded as an fp32 checkpoint and are run in bf16 by
wrapping each step in ``torch.autocast("cuda", dtype=torch.bfloat16)``. Autocast casts an op's inputs when the
op runs (PyTorch's AMP notes: the cast copies are cached only within one autocast region and only for leaf
tensors that require grad): every step, every F.linear first writes a bf16 copy of its fp32 weight (read 1
GB, write 512 MB) and the GEMM then reads that copy. Nothing fails and the values are the same. The fix is one
change: the weights cast to bf16 once before the loop, the step run without autocast (the same bf16 GEMMs).

Stage ``step`` (one ``kprof.range`` per step): 16 tokens through 4 Linear layers of 16384 x 16384 (no bias)
with a residual add each, the last hidden state kept. The model: the GEMMs, 4·2·16·16384·16384 = 3.44e10
FLOPs (tensor cores, bf16); the bf16 weights read once, 4·512 MB = 2.15 GB (the activations, 512 KB each,
aside): 2.15e9 bytes.

Per design (H100 SXM): good ~0.7 ms per step (the weights at the DRAM's rate; 12 kernels); bad: 4 casts of
1.5 GB of traffic each on top, ~8.6 GB a step → ~2.8 ms: ~4x. The limiter is the DRAM (resource "dram") in
both; the fix moves the casts out of the loop (cause "move_work").

First design (quick check, H100, 2026-11-26 ~16:00 UTC): 16 layers of 4096 x 4096: both variants ~0.82 ms a
step, bound by the host's dispatch (~26 µs an op), which hid the casts (0.98x). Widened to 4 layers of 16384
(GPU-bound; cause and resource unchanged) before recording.

Measured (H100, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 2884 µs, good 765 µs
(2.8 TB/s of the model's bytes): +277 %. The kept outputs are identical.

    python autocast_recast.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

TOKENS, WIDTH, LAYERS = 16, 16384, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's last hidden state), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    t, d, layers = (TOKENS, WIDTH, LAYERS) if cuda else (4, 32, 3)
    g = torch.Generator(device=dev).manual_seed(0)
    # the checkpoint's fp32 weights (made on the device: 4 GB)
    weights = [torch.randn(d, d, generator=g, device=dev) / d**0.5 * 0.5 for _ in range(layers)]
    xs = [torch.randn(t, d, generator=g, device=dev).to(torch.bfloat16) for _ in range(4)]
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
