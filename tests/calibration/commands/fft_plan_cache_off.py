"""A spectral (FNO-style) model run with PyTorch's cuFFT plan cache switched off
(``torch.backends.cuda.cufft_plan_cache.max_size = 0``, set to bound GPU memory after an out-of-memory report:
the docs say cuFFT plans may allocate GPU memory), so every rfft2 / irfft2 call creates a cuFFT plan
(cufftCreate, cufftXtMakePlanMany: the library's host planning, its device allocations and uploads) and
destroys it after the transform (cufftDestroy: the frees), where the default cache (4096 plans, keyed on the
transform's geometry) builds the two plans once and serves every later call. Sources: the PyTorch CUDA
semantics notes ("cuFFT plan cache": "repeatedly running FFT methods on tensors of same geometry with same
configuration" reuses the cached plan; max_size controls its capacity); PyTorch PR 8344 ("Cache cufft
plans"); the cuFFT documentation ("Plan creation": create a plan once and reuse it, plan creation allocates
resources); CuPy issue 3588 ("Reuse cufft plan objects": ~0.5 ms a transform saved).

Stage ``step`` (one ``kprof.range`` per step, inference): four spectral layers on a [32, 16, 128, 128] fp32
field (one of four inputs in turn): x = gelu(irfft2(rfft2(x) * K_l) + x) with a fixed complex filter K_l
[16, 128, 65] a layer; two values of the output kept a step. Bad: the plan cache's max_size 0 (eight plans
created and destroyed a step). Good: the default cache (max_size 4096). The same outputs exactly (the same
plans, the same transforms).

Model (the needed work): FLOPs ~5 N log2 N a transform pair and the products: ~2.5e9 a step; bytes: each
layer's rfft2, product, irfft2 and add/gelu (~17 MB tensors, ~10 passes): ~6.8e8 a step.

Per design (H100/H200): the good step ~0.25-0.4 ms (28 kernels, memory-bound: GPU-bound); the bad step adds
eight plan creations and destructions (~0.1-0.5 ms each on the host, with device allocations and frees):
~3-10x. The extra time is costly library/CUDA API setup calls in the loop (cause "cuda_api", resource None).

    python fft_plan_cache_off.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

B, C, H, W, LAYERS = 32, 16, 128, 128, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (two values a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, c, h, w = (B, C, H, W) if cuda else (2, 3, 16, 16)
    if cuda:
        torch.backends.cuda.cufft_plan_cache[torch.cuda.current_device()].max_size = (
            0 if variant == "bad" else 4096
        )
    g = torch.Generator(device=dev).manual_seed(0)
    xs = [torch.randn(b, c, h, w, generator=g, device=dev) for _ in range(4)]
    ks = [
        torch.complex(
            torch.randn(c, h, w // 2 + 1, generator=g, device=dev),
            torch.randn(c, h, w // 2 + 1, generator=g, device=dev),
        )
        * 0.5
        for _ in range(LAYERS)
    ]
    kept: list = []
    it = [0]

    def step():
        x = xs[it[0] % 4]
        it[0] += 1
        for k in ks:
            y = torch.fft.irfft2(torch.fft.rfft2(x) * k, s=(h, w))
            x = torch.nn.functional.gelu(y + x)
        return x[0, 0, :1, :2].flatten()

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
