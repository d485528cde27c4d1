"""A 3x3 max pool (stride 1, "same" padding) computed through ``F.unfold``: the 3x3 patches of the feature map
materialised (nine copies of it, [N, C x 9, H x W]) and reduced with ``amax`` (a pattern of hand-written pooling,
median and morphological filters built on unfold), where ``F.max_pool2d(x, 3, stride=1, padding=1)`` reads the
map once and writes the result. The inputs are non-negative (post-ReLU activations), so unfold's zero padding
and max_pool2d's -inf padding give the same result. Sources: the PyTorch documentation of torch.nn.Unfold
("Extracts sliding local blocks": the output holds C x prod(kernel_size) values for every block) and of
torch.nn.functional.max_pool2d; the CUDA C++ Best Practices Guide ("Memory Optimizations": minimise the data
moved through device memory).

Stage ``step`` (one ``kprof.range`` per step, inference): x [64, 64, 112, 112] bf16 (103 MB, non-negative; one of
four maps in turn) max-pooled 3x3, stride 1, padding 1; a few entries of the result kept. Bad: ``F.unfold(x, 3,
padding=1).view(n, c, 9, h, w).amax(2)``. Good: ``F.max_pool2d(x, 3, stride=1, padding=1)``. The same values
exactly.

Model (the needed work): FLOPs 8 comparisons an output: 4.1e8; bytes x read and the result written: 2.1e8.

Per design (H100/H200): the good step ~80-150 us (206 MB at ~1.5-3 TB/s, one pooling kernel); the bad step writes the
unfolded [64, 576, 12544] bf16 tensor (925 MB) and reads it back for the amax (the im2col kernel's gathers and the
reduction): ~0.7-1.3 ms, ~5-12x. The extra time is the bytes of the materialised patches moved through DRAM
(cause "over_fetch", resource "dram").

    python unfold_maxpool.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

N, C, H, W = 64, 64, 112, 112


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (a few entries of the pooled map a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    n, c, h, w = (N, C, H, W) if cuda else (2, 3, 9, 7)
    dt = torch.bfloat16 if cuda else torch.float32
    g = torch.Generator(device=dev).manual_seed(0)
    xs = [torch.randn(n, c, h, w, generator=g, device=dev).relu_().to(dt) for _ in range(4)]
    kept: list = []
    it = [0]

    def step():
        x = xs[it[0] % 4]
        it[0] += 1
        if variant == "bad":
            y = torch.nn.functional.unfold(x, 3, padding=1).view(n, c, 9, h, w).amax(2)
        else:
            y = torch.nn.functional.max_pool2d(x, 3, stride=1, padding=1)
        return y[0, :2, :2, :4].float().flatten()

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
