"""A real signal filtered through complex FFTs: ``torch.fft.ifft(torch.fft.fft(x) * H).real`` (the textbook
frequency-domain filter, as written for complex data or ported from MATLAB), where the real-input transforms
``torch.fft.irfft(torch.fft.rfft(x) * H_half, n=L)`` give the same signal: the spectrum of a real signal is
Hermitian, so rfft computes and stores only its L / 2 + 1 non-negative frequencies and irfft returns a real
signal, while fft of a real tensor computes the half and fills the other half by conjugate symmetry (a full
complex [B, L] spectrum, 8 B a sample), the product runs over the full spectrum, ifft is a complex-to-complex
transform over it and ``.real`` is then copied out of the complex result. Sources: the PyTorch documentation of
torch.fft.rfft / irfft ("the FFT of a real signal is Hermitian-symmetric ... rfft returns only the positive
frequencies"); the cuFFT documentation ("real-to-complex ... transforms: about half the work and memory of the
complex ones", "Accuracy and Performance"); NumPy's numpy.fft documentation (rfft for real input); the CUDA C++
Best Practices Guide ("Memory Optimizations": bytes moved are the cost of memory-bound work).

Stage ``step`` (one ``kprof.range`` per step, inference): a batch of 256 real signals of L = 65536 samples fp32
(one of four on the GPU in turn), a fixed low-pass response H(k) = 1 / (1 + (k / (L / 16))^4) (real, even), the
filtered signals written to a preallocated out [256, 65536] fp32. Bad: ``out.copy_(torch.fft.ifft(torch.fft.fft(x)
* H).real)`` (H over all L frequencies). Good: ``torch.fft.irfft(torch.fft.rfft(x) * H_half, n=L, out=out)``.

Model (the needed work): FLOPs two real FFTs, 2 x 2.5 L log2 L a signal: 1.34e9; bytes: x read and out written
once (64 MiB each): 1.34e8.

Per design (H100/H200): the good step ~100-150 us (three memory-bound kernels over ~32-64 MiB each); the bad step
~250-350 us (the conjugate fill, the full complex product, a complex-to-complex inverse and the strided copy of
the real part: about twice the bytes): ~2-2.5x. The extra time is the cuFFT and elementwise kernels' DRAM
traffic over the redundant half of the spectrum: the needed result by a costlier method (cause "move_work",
resource "dram").

    python real_fft_as_complex.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

B, L = 256, 65536


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (a few filtered samples a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, n = (B, L) if cuda else (4, 256)
    g = torch.Generator(device=dev).manual_seed(0)
    xs = [torch.randn(b, n, generator=g, device=dev) for _ in range(4)]
    k = torch.arange(n // 2 + 1, device=dev, dtype=torch.float32)
    h_half = 1.0 / (1.0 + (k / (n / 16)) ** 4)  # real, even low-pass response over the rfft frequencies
    h_full = torch.cat([h_half, h_half[1:-1].flip(0)])  # the same response over all n fft frequencies
    out = torch.empty(b, n, device=dev)
    kept: list = []
    it = [0]

    def step():
        x = xs[it[0] % 4]
        it[0] += 1
        if variant == "bad":
            out.copy_(torch.fft.ifft(torch.fft.fft(x) * h_full).real)
        else:
            torch.fft.irfft(torch.fft.rfft(x) * h_half, n=n, out=out)
        return out[:2, :4].clone()

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(step())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
