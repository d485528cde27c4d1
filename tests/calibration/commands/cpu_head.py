"""A model head left on the CPU after the model was moved to the GPU: the model was put on the GPU
(``model.to("cuda")``), then a new head was attached for the task (``model.head = nn.Sequential(...)``, as
fine-tuning code replaces a classifier), which stays on the CPU; the device-mismatch error was "fixed" by
moving the features to the head (``model.head(h.cpu()).to("cuda")``), so every step waits for the GPU,
runs the head's matrix products on the host's cores and copies the result back, while the GPU idles.
Sources: the PyTorch documentation of torch.nn.Module.to ("moves ... parameters and buffers": modules
assigned later are not moved) and its "CUDA semantics" notes; the PyTorch tutorial "Finetuning
Torchvision Models" (the head replaced, then the model moved to the device) and the PyTorch Performance
Tuning Guide ("avoid unnecessary CPU-GPU synchronization", keep the work on the device).

Stage ``step`` (one ``kprof.range`` per step): inference (torch.inference_mode) on x [2048, 4096] bf16: a
trunk of 8 Linear(4096, 4096) + GELU layers and a Linear(4096, 1024) (bf16, on the GPU), then the head
LayerNorm(1024) → Linear(1024, 512) → GELU → Linear(512, 256) (fp32); each step's logits' mean kept on
the device. Bad: the head on the CPU (features copied to the host, fp32 CPU matmuls, logits copied back).
Good: the head on the GPU. The same logits up to rounding.

Per design (H100 SXM, 16 host cores): the trunk ~0.6 TFLOP (bf16 tensor cores) ~1-1.3 ms; the head 2.7
GFLOP: ~0.05 ms on the GPU, ~2-6 ms on the host's cores; the copies 8 MB (bf16 → fp32 on the host) and 2
MB. Good ~1.1-1.4 ms a step, bad ~3.5-8 ms: ~3-6x. The extra time is the host's work between the GPU's
kernels (the head's CPU matmuls, the GPU idle meanwhile): cause "host", resource None.

    python cpu_head.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run
from torch import nn

import kprof

ROWS, WIDTH, LAYERS, FEAT = 2048, 4096, 8, 1024


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's logits' mean), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    n, d, f = (ROWS, WIDTH, FEAT) if cuda else (16, 64, 32)
    torch.manual_seed(0)
    layers = []
    for _ in range(LAYERS):
        layers += [nn.Linear(d, d), nn.GELU()]
    trunk = nn.Sequential(*layers, nn.Linear(d, f)).to(dev, dt)
    head = nn.Sequential(nn.LayerNorm(f), nn.Linear(f, 512), nn.GELU(), nn.Linear(512, 256))  # fp32
    head_dev = "cpu" if variant == "bad" else dev  # the planted form: the head never moved
    head = head.to(head_dev)
    x = torch.randn(n, d, generator=torch.Generator().manual_seed(1)).to(dev, dt)
    kept: list = []

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    h = trunk(x).float()
                    logits = head(h.to(head_dev)).to(dev)
                    kept.append(logits.mean())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
