"""Convolutions run with cuDNN switched off: ``torch.backends.cudnn.enabled = False`` left in a training or
inference script (set to work around a cuDNN error or for a reproducibility test, and never removed), so
every nn.Conv2d on the GPU falls back to PyTorch's own "slow" convolution: for each sample of the batch an
im2col kernel writes the unfolded input (C·9 x H·W) to memory and a GEMM multiplies it by the weights, one
small GEMM a sample, where cuDNN runs the whole batch as one implicit-GEMM kernel. Nothing fails; the
outputs are the same up to rounding. The fix: cuDNN left on (the default). Sources: the PyTorch
documentation of torch.backends.cudnn ("enabled: a bool that controls whether cuDNN is enabled"), the
PyTorch forums' threads on training slowed by ``cudnn.enabled = False``, and Chetlur et al., "cuDNN:
Efficient Primitives for Deep Learning" (2014: the implicit GEMM avoids materialising the im2col matrix).

Stage ``step`` (one ``kprof.range`` per step): inference (torch.inference_mode) on x [32, 256, 28, 28]
bf16 through 4 Conv2d(256, 256, 3, padding=1) + ReLU layers; each step's output mean kept. Bad: the loop
under ``torch.backends.cudnn.flags(enabled=False)`` (the global switch, scoped here so that the CPU test
leaves it as it was). Good: cuDNN on. The same layers and inputs.

Per design (H100 SXM): 4 x 29.6 GFLOP bf16 a step: cuDNN ~0.1 ms a layer (~0.4-0.6 ms a step); the
fallback 32 samples x (im2col of 3.6 MB + a 0.92 GFLOP GEMM, ~15-25 us) ~0.5-0.8 ms a layer
(~2-3.5 ms a step): ~4-7x. The extra time is the same convolutions done by a costlier library method
(cause "move_work"), resource None.

    python cudnn_disabled.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, CH, SIDE, LAYERS = 32, 256, 28, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's output mean), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    n, c, s = (BATCH, CH, SIDE) if cuda else (2, 8, 8)
    g = torch.Generator().manual_seed(0)
    layers = [
        (
            (torch.randn(c, c, 3, 3, generator=g) / (3 * c**0.5)).to(dev, dt),
            (0.01 * torch.randn(c, generator=g)).to(dev, dt),
        )
        for _ in range(LAYERS)
    ]
    x = torch.randn(n, c, s, s, generator=g).to(dev, dt)
    kept: list = []

    def loop(steps: int) -> None:
        # the planted switch: cuDNN off (as torch.backends.cudnn.enabled = False), scoped to the loop
        with torch.backends.cudnn.flags(enabled=(variant == "good")), torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    h = x
                    for w, b in layers:
                        h = F.relu(F.conv2d(h, w, b, padding=1))
                    kept.append(h.float().mean())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
