"""A log-power spectrogram front end whose analysis window came from numpy: ``torch.from_numpy(
np.hanning(...))`` is float64, so ``frames * window`` promotes the float32 audio frames to float64
(PyTorch's type promotion: a dimensioned float64 operand wins), and everything after it runs in
double: the FFT in complex128, the power and the log in float64, until the features are cast back
with ``.float()`` for the model. Nothing fails and the values are right; every kernel of the step
moves twice the bytes (CUDA C++ Best Practices Guide: use the narrowest type that suffices; PyTorch's
type-promotion rules). The fix is one change: the window made in float32 (``.float()``; or
``torch.hann_window``).

Stage ``step`` (one ``kprof.range`` per step): B = 64 clips of 160,000 samples (10 s at 16 kHz),
frames of n_fft = 1024 every 256 samples (622 per clip, 39,808 frames), window, rfft (513 bins),
|X|², log(· + 1e-4), the features' mean over frames kept. The model is the float32 eager pipeline the
code means (each op's tensors read and written once, in float32): framing+window (read the 41 MB
of audio, write 163 MB of frames), rfft (read 163 MB, write 163 MB of complex64), abs (163 → 82 MB),
square, add, log (82 → 82 MB each), mean (read 82 MB): 1.35e9 bytes; FLOPs ~2.5·n_fft·log2(n_fft)
per frame plus ~6 per bin: 1.2e9. The bad variant moves ~2x those bytes (float64 / complex128
tensors) plus the final cast.

Measured (H100 SXM, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 1260 µs, good
652 µs (+93 %). The variants' kept features agree to 4e-6 (of ~10).

    python window_promotion.py --variant bad --steps 20
"""

from __future__ import annotations

import numpy as np
import torch
from _common import parser, run

import kprof

N_FFT, HOP = 1024, 256


def make(variant: str, cuda: bool):
    """The step's loop and the features it keeps (one mean per clip and bin per step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, samples = (64, 160_000) if cuda else (2, 4096)
    g = torch.Generator(device=dev).manual_seed(0)
    t = torch.arange(samples, device=dev) / 16_000.0
    tone = torch.sin(2 * torch.pi * 440.0 * t)
    clips = [0.1 * torch.randn(b, samples, device=dev, generator=g) + 0.5 * tone for _ in range(2)]
    window = torch.from_numpy(np.hanning(N_FFT + 1)[:-1]).to(dev)  # periodic Hann, float64 (numpy's dtype)
    if variant == "good":
        window = window.float()
    it = [0]
    kept: list = []

    def step(x):
        frames = x.unfold(-1, N_FFT, HOP) * window  # bad: float64 (promoted), good: float32
        spec = torch.fft.rfft(frames, dim=-1)
        feats = torch.log(spec.abs().square() + 1e-4).float()  # the model's input
        kept.append(feats.mean(dim=1))  # stays on the GPU

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                step(clips[it[0] % len(clips)])
                it[0] += 1

    return loop, (lambda: torch.stack(kept).cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
