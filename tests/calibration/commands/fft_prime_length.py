"""A long-convolution layer (the FFT convolution of Hyena / S4-style sequence models, of audio filter banks)
whose FFT length is taken straight from the textbook formula n = L + M - 1 for a linear convolution of a
length-L signal with a length-M filter: here 4096 + 4096 - 1 = 8191, a (Mersenne) prime, so cuFFT cannot
split it into small radices and runs Bluestein's algorithm (a chirp-z transform through FFTs of a padded
power-of-two length, about three transforms for one, and more passes over memory), where any length >= L + M
- 1 gives the same convolution: 8192 = 2^13 runs cuFFT's radix kernels. Sources: the cuFFT documentation,
"Accuracy and Performance" (sizes of the form 2^a 3^b 5^c 7^d are the fastest; other prime factors use
Bluestein's algorithm, slower and less accurate); SciPy's ``scipy.fft.next_fast_len`` ("the FFT of a prime
length ... can be much slower"; scipy.signal.fftconvolve pads to it); the Hyena code's ``fftconv`` (fft_size
= 2 L). Nothing fails and the values agree (both exact linear convolutions; the extra zero is cut off). The fix
is one change: n = next fast length (8192) instead of L + M - 1.

Stage ``step`` (one ``kprof.range`` per step, inference): a batch of 8 sequences of L = 4096 steps and 512
channels (a pool of 4 on the GPU, fp32, channels first), a learned filter of M = 4096 taps a channel:
y = irfft(rfft(u, n) * rfft(k, n), n)[..., :L] + D u, gated by a second input (y * v). The model: the
transforms, 3 x 4096 signals... of n = 8192: ~5 n log2 n FLOPs each (~2e9 in all) and the bytes: u, v read,
the spectra written and read once (~4096 x 4097 x 8 B a transform), y written: ~6e8.

Per design (H100 SXM): good ~3 memory-bound cuFFT passes of ~134 MB and a few elementwise kernels: ~0.4-0.6
ms a step; bad the same transforms by Bluestein: a chirp multiply, forward and inverse power-of-two FFTs of
16384 points and a chirp multiply per transform: ~3-5x the passes: ~1.5-2.5 ms: ~3-4x. The bad step's extra
time is the costlier algorithm cuFFT runs for the prime length, memory-bound passes (cause "move_work",
resource "dram").

    python fft_prime_length.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

BATCH, CHANNELS, L, M = 8, 512, 4096, 4096


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (a checksum of each step's output), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, c, length, taps = (BATCH, CHANNELS, L, M) if cuda else (2, 4, 96, 96)
    # The planted switch: the FFT length.
    n = length + taps - 1  # 8191 on the GPU: prime
    if variant == "good":
        n = 1 << (n - 1).bit_length()  # the next fast length (a power of two: 8192)
    g = torch.Generator().manual_seed(0)
    pool = [
        (torch.randn(b, c, length, generator=g).to(dev), torch.randn(b, c, length, generator=g).to(dev))
        for _ in range(4)
    ]
    k = (torch.randn(c, taps, generator=g) * torch.exp(-torch.arange(taps) / (taps / 8)) / 8).to(dev)
    d = torch.randn(c, 1, generator=g).to(dev)
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        with torch.no_grad():
            for _ in range(steps):
                u, v = pool[state["i"] % len(pool)]
                state["i"] += 1
                with kprof.range("step"):
                    kf = torch.fft.rfft(k, n=n)
                    uf = torch.fft.rfft(u, n=n)
                    y = torch.fft.irfft(uf * kf, n=n)[..., :length]
                    y = (y + d * u) * v
                    kept.append(y[:, :, ::997].sum())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
