"""A GroupNorm with one group (``nn.GroupNorm(1, C)``: the "LayerNorm over C, H, W" that PoolFormer-, ConvNeXt-
and MobileViT-style convolutional blocks use) on a small batch of large feature maps, where PyTorch's CUDA
kernel computes the statistics with one thread block per (sample, group): N x G = 8 blocks for the 132 SMs, each
block walking 3.1 M elements (12.6 MB) alone with a Welford update per element, while the rest of the GPU idles.
The statistics by a split reduction (``torch.var_mean`` over the flattened sample: the reduction spread over the
whole GPU) and the per-channel affine folded into one ``torch.addcmul`` serve. Sources: PyTorch's
aten/src/ATen/native/cuda/group_norm_kernel.cu (``RowwiseMomentsCUDAKernel<<<N * G, 512>>>``: one block per
group); PyTorch issues on GroupNorm's speed with few groups or small batches (e.g. "GroupNorm is considerably
slower than BatchNorm", "nn.GroupNorm very slow for num_groups=1"); vendor forks that split the row over several
blocks for large rows; Y. Wu and K. He, "Group Normalization" (ECCV 2018); W. Yu et al., "MetaFormer Is Actually
What You Need for Vision" (CVPR 2022: GroupNorm(1, C) as the token-mixer's norm); the CUDA C++ Best Practices
Guide, "Execution Configuration" (enough blocks to occupy every multiprocessor).

Stage ``step`` (one ``kprof.range`` per step, inference): one GroupNorm(1, 48) with a per-channel weight and bias
of a [8, 48, 256, 256] fp32 activation (two activations, used in turn), two values kept. Bad: F.group_norm (8
statistics blocks, then the fused elementwise apply). Good: torch.var_mean(x.view(8, -1), dim=1) (a split
reduction over the GPU), the scale and shift of each (sample, channel) from [8] and [48] vectors, and one
torch.addcmul(shift, x, scale) over the activation. The same result to fp32 rounding.

Model (the needed work): FLOPs ~4 an element (the statistics' sums, the scale and shift), 1e8 a step; bytes the
activation read twice (statistics and apply) and the output written: 3 x 100.7 MB = 3.0e8 a step.

Per design (H100/H200): the good step ~80-100 us (300 MB at ~4 TB/s; ~7 small kernels, GPU-bound); the bad ~0.3-0.8
ms: its statistics kernel keeps 8 SMs busy (each ~15-50 GB/s with one 512-thread block: 12.6 MB in ~0.25-0.8
ms), the apply ~50 us: ~3.5-8x. The extra time is a grid of 8 blocks for 132 SMs (cause "few_blocks"; resource
None: the limiter is the grid, not a pipe or memory level).

    python groupnorm_one_group.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

N, C, H, W, NX, EPS = 8, 48, 256, 256, 2, 1e-5


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (two values a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    n, c, h, w = (N, C, H, W) if cuda else (2, 6, 16, 12)
    g = torch.Generator(device=dev).manual_seed(0)
    xs = [torch.randn(n, c, h, w, generator=g, device=dev) * 2.0 + 0.5 for _ in range(NX)]
    weight = 1.0 + 0.1 * torch.randn(c, generator=g, device=dev)
    bias = 0.1 * torch.randn(c, generator=g, device=dev)
    kept: list = []
    it = [0]

    if variant == "bad":

        def norm(x):
            return F.group_norm(x, 1, weight, bias, EPS)  # one statistics block a sample

    else:

        def norm(x):
            var, mean = torch.var_mean(x.view(x.shape[0], -1), dim=1, correction=0)  # split over the GPU
            scale = torch.rsqrt(var + EPS)[:, None] * weight  # [n, c]
            shift = bias - mean[:, None] * scale
            return torch.addcmul(shift[:, :, None, None], x, scale[:, :, None, None])

    def step():
        y = norm(xs[it[0] % NX])
        it[0] += 1
        return torch.stack([y[0, 0, 0, 0], y[-1, -1, -1, -1]])

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
