"""A long convolution (a filter as long as the sequence: the implicit long convolutions of Hyena / H3 /
S4-style sequence mixers, a room impulse response, a long FIR filter) computed directly with
``F.conv1d`` (depthwise, the filter padded causally), O(L²) multiply-adds per channel, where the
convolution theorem gives the same result with FFTs in O(L log L): rfft of the input and of the filter
at length 2L, a product, an irfft. Sources: Poli et al., "Hyena Hierarchy" (ICML 2023) and its
``fftconv``; Fu et al., "FlashFFTConv" (2023); the convolution theorem (Oppenheim & Schafer,
"Discrete-Time Signal Processing", §8.7: linear convolution by the DFT with zero padding to 2L - 1);
the PyTorch documentation of torch.fft.rfft / irfft.

Stage ``step`` (one ``kprof.range`` per step): u [B = 8, L = 1024, C = 512] fp32; the block's input
projection (u → x and a gate, [8192, 512] x [512, 1024]); the depthwise causal long convolution of x
(C channels, each with its own filter h [C, L]); the gate applied; the output projection ([8192, 512] x
[512, 512]); y's mean kept. Bad: ``F.conv1d(F.pad(x, (L - 1, 0)), h.flip(-1)[:, None], groups=C)``.
Good: ``irfft(rfft(x, 2L) · rfft(h, 2L), 2L)[..., :L]``. The same y up to rounding.

Per design (H100 SXM): the direct convolution 8·512·1024·1024 = 4.3 G multiply-adds (fp32, depthwise:
no tensor cores), ~1.5-3 ms; the FFT path ~0.05-0.1 ms; the projections ~13 GFLOP fp32 (PyTorch's
default: no TF32 for matmuls), ~0.3-0.5 ms: bad ~2-3.5 ms a step, good ~0.4-0.6 ms: ~4-6x. The extra time
is the direct algorithm where the FFT gives the same result (cause "move_work"); which unit the
library's depthwise kernel saturates (FMA, L1 loads of the input and the filter) depends on the kernel
cuDNN or PyTorch picks: resource None.

    python long_conv_direct.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

B, L, C = 8, 1024, 512


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's mean of y), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, seq, c = (B, L, C) if cuda else (2, 64, 16)
    g = torch.Generator().manual_seed(0)
    u = torch.randn(b, seq, c, generator=g).to(dev)
    w_in = (torch.randn(c, 2 * c, generator=g) / c**0.5).to(dev)
    w_out = (torch.randn(c, c, generator=g) / c**0.5).to(dev)
    # A decaying filter per channel (as Hyena's implicit filters are), [C, L].
    t = torch.arange(seq, dtype=torch.float32)
    rate = 0.002 + 0.05 * torch.rand(c, 1, generator=g)
    h = (torch.randn(c, seq, generator=g) * torch.exp(-rate * t) / seq**0.5).to(dev)
    kept: list = []

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                x, gate = (u @ w_in).split(c, dim=-1)
                xc = x.transpose(1, 2)  # [b, c, seq]
                if variant == "bad":  # the planted form: direct depthwise convolution, O(L²) a channel
                    yc = F.conv1d(F.pad(xc, (seq - 1, 0)), h.flip(-1)[:, None, :], groups=c)
                else:  # the fix: the convolution theorem, zero-padded to 2L
                    n = 2 * seq
                    yc = torch.fft.irfft(torch.fft.rfft(xc, n=n) * torch.fft.rfft(h, n=n), n=n)[..., :seq]
                y = (yc.transpose(1, 2) * torch.sigmoid(gate)) @ w_out
                kept.append(y.mean())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
