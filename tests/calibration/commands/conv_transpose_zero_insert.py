"""A stride-2 transposed convolution (a decoder's 2x upsampling layer) computed the way it is often derived on
paper: the input's pixels spread apart with zeros between them (the "zero-insertion" or "fractionally strided"
view of a transposed convolution), then an ordinary convolution with the flipped, transposed kernel over the
zero-filled grid: three of every four input values of that convolution are the inserted zeros, so 3/4 of its
multiply-adds on the tensor cores multiply by zero, where ``conv_transpose2d`` (cuDNN's data-gradient kernels,
which skip the zeros by construction) does only the needed quarter. The same outputs up to rounding. Sources:
Dumoulin & Visin, "A guide to convolution arithmetic for deep learning" (2016), section 4 ("Transposed
convolution arithmetic": the zero-inserted input and its cost), the PyTorch documentation of
``torch.nn.ConvTranspose2d``, the PyTorch performance tuning guide (channels_last for convolutions).

Stage ``step`` (one ``kprof.range`` per step): y = the transposed convolution of x [16, 256, 64, 64] bf16
(channels_last) with w [256, 256, 4, 4], stride 2, padding 1: y [16, 256, 128, 128], under
``torch.inference_mode``; the output kept. Bad: xz [16, 256, 127, 127] zero-filled, xz[:, :, ::2, ::2] = x, then
conv2d(xz, w flipped and transposed, padding 2). Good: conv_transpose2d(x, w, stride=2, padding=1).

Model (the needed work): FLOPs 2 x 16 x 256 x 256 x 64 x 64 x 16 = 1.37e11 (tensor cores, bf16); bytes: x
(33.5 MB), w (2 MB) and y (134 MB): ~1.7e8.

Per design (H100/H200): the good step ~0.3-0.5 ms (1.37e11 FLOPs at ~300-500 TFLOP/s); the bad step's convolution
5.5e11 FLOPs (4x: every output pixel's 4x4 window over the zero-filled grid) ~1.2-1.8 ms, plus the zero fill (132 MB)
and the strided copy (~67 MB): ~0.05-0.1 ms: ~3-4x. The extra time is the convolution's multiply-adds
over inserted zeros on the tensor cores (cause "move_work": the needed result computed by a costlier method than a
legal alternative), resource "tensor".

    python conv_transpose_zero_insert.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, CH, SIDE, K = 16, 256, 64, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's output), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    n, c, s = (BATCH, CH, SIDE) if cuda else (2, 8, 9)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, c, s, s, generator=g).to(dev, dt).contiguous(memory_format=torch.channels_last)
    w = (torch.randn(c, c, K, K, generator=g) / (c * K) ** 0.5).to(dev, dt)
    wc = (
        w.flip(2, 3).transpose(0, 1).contiguous(memory_format=torch.channels_last)
    )  # the equivalent conv's kernel
    w = w.contiguous(memory_format=torch.channels_last)
    kept: list = []

    def step():
        if variant == "bad":
            xz = torch.zeros(n, c, 2 * s - 1, 2 * s - 1, device=dev, dtype=dt)
            xz = xz.contiguous(memory_format=torch.channels_last)
            xz[:, :, ::2, ::2] = x
            return F.conv2d(xz, wc, padding=K - 1 - 1)
        return F.conv_transpose2d(x, w, stride=2, padding=1)

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(step())
                if len(kept) > 2:
                    kept.pop(0)  # the last outputs only (134 MB each on the GPU)

    return loop, (lambda: kept[-1].double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
