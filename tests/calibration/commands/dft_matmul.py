"""The 2-D discrete Fourier transform of a batch of images computed as two dense products with the DFT matrices
(X_f = F_H X F_W^T, F[j, k] = exp(-2 pi i j k / n), complex64: O(n^3) an image, on the FP32 pipes) where the FFT
serves (``torch.fft.fft2``: O(n^2 log n), cuFFT, memory-bound). A textbook or TPU-style formulation ported to
the GPU. Sources: J. W. Cooley and J. W. Tukey, "An algorithm for the machine calculation of complex Fourier
series" (Math. Comp. 19, 1965); the torch.fft documentation (fft2: cuFFT plans); the cuFFT documentation
(batched 2-D transforms); the PyTorch performance tuning guide (use the library's dedicated kernel).

Stage ``step`` (one ``kprof.range`` per step, inference): the mean power spectrum of a batch of 128 fp32 images
of 256 x 256 (mean over the batch of |X_f|^2, [256, 256]); two values of it kept. Bad: the images cast to
complex64, X F_W^T (one [32768, 256] x [256, 256] complex GEMM), then F_H times each image (torch.matmul's
broadcast of the 2-D F_H: the transposed product folded into one more such GEMM, a transposed copy of the
intermediate first). Good: torch.fft.fft2 (cuFFT, a real input), then |.|^2 and the mean. The same spectrum
(the summation order differs: fp32 rounding, ~1e-6 relative).

Model (the needed work): the FFT's FLOPs, 5 N log2 N a complex transform of N = 65536 points, times 128: 6.7e8;
bytes the images read (33.5 MB) and a complex intermediate written and read back (2 x 67 MB): ~1.7e8.

Per design (H100/H200, default fp32 matmul precision: no TF32): the bad step two complex GEMMs of 8 x 32768 x
256 x 256 = 1.7e10 FLOPs each, 3.4e10 a step, at ~45-55 TFLOP/s of FP32 FMA: ~0.65-0.8 ms, plus the casts and
the transposed copy (~0.1 ms); the good step ~0.1-0.15 ms (cuFFT and two elementwise kernels over 67 MB): ~5-8x.
The extra time is the transform computed by a costlier method on the FP32 pipes (cause "move_work", resource
"fma").

    python dft_matmul.py --variant bad --steps 20
"""

from __future__ import annotations

import math

import torch
from _common import parser, run

import kprof

B, H, W, NX = 128, 256, 256, 2


def _dft(n: int, dev: str) -> torch.Tensor:
    k = torch.arange(n, dtype=torch.float64)
    ang = -2.0 * math.pi * torch.outer(k, k).remainder(n) / n  # the product j k reduced mod n: exact phases
    return torch.polar(torch.ones_like(ang), ang).to(torch.complex64).to(dev)


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (two values of the spectrum a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, h, w = (B, H, W) if cuda else (3, 16, 8)
    g = torch.Generator(device=dev).manual_seed(0)
    xs = [torch.randn(b, h, w, generator=g, device=dev) for _ in range(NX)]
    fh, fwt = _dft(h, dev), _dft(w, dev).T  # F_W is symmetric: F_W^T = F_W
    kept: list = []
    it = [0]

    if variant == "bad":

        def spectrum(x):
            y = x.to(torch.complex64) @ fwt  # [b, h, w] @ [w, w]: one GEMM over the b h rows
            z = fh @ y  # [h, h] @ [b, h, w]: folded into (y^T @ F_H^T)^T, y^T copied first
            return (z.real.square() + z.imag.square()).mean(0)

    else:

        def spectrum(x):
            z = torch.fft.fft2(x)  # cuFFT over the last two dimensions
            return (z.real.square() + z.imag.square()).mean(0)

    def step():
        p = spectrum(xs[it[0] % NX])
        it[0] += 1
        return p[1, 1:3]

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
