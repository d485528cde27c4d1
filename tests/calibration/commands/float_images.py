"""An image classifier's training loop that hands its batches to the GPU as normalised float32 images: the
data pipeline (torchvision's ``ToTensor`` + ``Normalize`` on the host, the default recipe) turns each uint8
pixel into a 4-byte float before the copy, so every step moves 4x the bytes over PCIe that the pixels need.
The copies are already pinned and asynchronous (``pin_memory`` pool, ``non_blocking=True``): the only waste is
their size, and the step waits for them (the copy and the compute share the stream, as most loops do).
Sources: NVIDIA's apex ImageNet example (``fast_collate`` keeps uint8, its ``data_prefetcher`` converts and
normalises on the GPU), NVIDIA DALI's documentation (decode and normalise on the GPU), the CUDA C++ Best
Practices Guide, "Minimize data transfer between the host and the device". Nothing fails and the values
are identical (the same arithmetic on the GPU). The fix is one change: the batches kept and copied as uint8,
then converted and normalised on the GPU (``x.float().div_(255).sub_(mean).div_(std)``).

Stage ``step`` (one ``kprof.range`` per step): a batch of 512 images 3 x 128 x 128 (a pool of 4 pinned
batches on the host, 100.7 MB each as float32, 25.2 MB as uint8) copied to the GPU, a patch-embedding
convolution 3 -> 256 (8 x 8, stride 8: 256 patches an image), GELU, a 1x1 mixing convolution 256 -> 256,
mean-pooled, a linear classifier to 1000 classes, cross-entropy, backward, a foreach SGD step; bf16 autocast.
The model: the convolutions forward and backward, 3·2·512·256·(192·256 + 256·256) = 9.3e10 FLOPs (tensor
cores); the bytes: the images read from device memory once as uint8 (25 MB; the normalisation's output
written and read once more, ~100 MB in bf16/fp32 passes), the activations (~0.4 GB): ~5e8.

Per design (H100 SXM, PCIe Gen5 host link, ~25-50 GB/s for pinned copies): good ~25 MB copied in ~0.5-1 ms plus
~0.5 ms of compute; bad ~101 MB in ~2-4 ms plus the same compute: ~2-4x. The step waits for host-to-device
copies of bytes it does not need (cause "copy"; no pipe or device memory level is busy: resource None).

    python float_images.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, SIDE, PATCH, WIDTH, CLASSES = 512, 128, 8, 256, 1000
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, side, width, classes = (BATCH, SIDE, WIDTH, CLASSES) if cuda else (4, 32, 16, 10)
    g = torch.Generator().manual_seed(0)
    mean = torch.tensor(MEAN).view(1, 3, 1, 1)
    std = torch.tensor(STD).view(1, 3, 1, 1)
    pool_u8 = [torch.randint(0, 256, (b, 3, side, side), generator=g, dtype=torch.uint8) for _ in range(4)]
    labels = [torch.randint(0, classes, (b,), generator=g).to(dev) for _ in range(4)]
    # The planted switch: what the data pipeline hands to the loop (pinned in both).
    if variant == "bad":
        pool = [((u.float() / 255 - mean) / std) for u in pool_u8]  # ToTensor + Normalize on the host
    else:
        pool = pool_u8
    if cuda:
        pool = [t.pin_memory() for t in pool]
    mean_d, std_d = mean.to(dev), std.to(dev)
    params = [
        (torch.randn(width, 3, PATCH, PATCH, generator=g) / (3 * PATCH * PATCH) ** 0.5).to(dev),
        (torch.randn(width, width, 1, 1, generator=g) / width**0.5).to(dev),
        (torch.randn(classes, width, generator=g) / width**0.5).to(dev),
    ]
    for p in params:
        p.requires_grad_()
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            i = state["i"] % len(pool)
            state["i"] += 1
            with kprof.range("step"):
                x = pool[i].to(dev, non_blocking=True)
                if variant == "good":
                    x = (x.float() / 255 - mean_d) / std_d  # the same arithmetic, on the GPU
                with torch.autocast(dev, dtype=torch.bfloat16, enabled=cuda):
                    h = F.gelu(F.conv2d(x, params[0], stride=PATCH))
                    h = F.gelu(F.conv2d(h, params[1]))
                    logits = F.linear(h.mean((2, 3)), params[2])
                loss = F.cross_entropy(logits.float(), labels[i])
                loss.backward()
                with torch.no_grad():
                    torch._foreach_add_(params, [p.grad for p in params], alpha=-1e-2)
                    for p in params:
                        p.grad = None
                kept.append(loss.detach())

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
