"""A data-parallel image-classification training loop on 2 ranks (NCCL, one GPU each) that calls
``torch.distributed.barrier()`` at the end of every step "to keep the ranks together". With NCCL the barrier
is an all-reduce of one element whose wait blocks the host until the GPU's stream has drained, so every step
the host prepares the next batch (random crops and flips of uint8 images, stacked and pinned on the CPU)
only once the GPU is done, and the GPU idles while it does. PyTorch's documentation of ``barrier``: the
collective "blocks processes until the whole group enters this function"; data-parallel training needs no
barrier between steps (the gradients' all-reduce already keeps the ranks in step). Nothing fails and the
values are right. The fix is one change: the barrier removed, the host preparing batch n+1 while the GPU
runs step n.

Stage ``step`` (one ``kprof.range`` per step on each rank): 128 images a rank cropped to 3 x 64 x 64 from a
host set of 3 x 72 x 72 uint8 images (a Python loop: index, crop, flip; ``torch.stack``, ``pin_memory``,
``non_blocking`` copy), then on the GPU in bf16: normalised, cut into 8 x 8 patches (8192 tokens of 192
values), a patch embedding (192 → 1024), 4 residual MLP layers (1024 → 4096 → 1024, GELU), mean pooling, a
1000-class head, cross-entropy, backward, one all-reduce of the flat gradients (35 M bf16), SGD. 6 · 35 M
· 8192 = 1.7e12 FLOPs a rank a step.

Per design (2 x H100 SXM): the GPU's step ~4-5 ms; the host's batch ~2-4 ms (measured ~3 ms on a 2-core CPU
host) plus ~1 ms of launches: bad ~6.5-9 ms (host then GPU, in turn), good ~4-5 ms (overlapped): ~1.5x.
Both ranks alike (no straggler planted).

The kept outputs (each rank's loss per step and its parameters' sum at the end) are identical in both
variants: the same batches, the same operations; the barrier moves no value.

    python ranks3_barrier_every_step.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from _ranks import main

import kprof

IMAGES, SIZE, CROP, BATCH, PATCH, WIDTH, HIDDEN, LAYERS, CLASSES, LR = (
    512,
    72,
    64,
    128,
    8,
    1024,
    4096,
    4,
    1000,
    1e-2,
)


def crop_batch(images, labels, gen, batch, crop):
    """``batch`` random crops (``crop`` x ``crop``, flipped left-right half the time) of ``images``
    (N x 3 x S x S uint8, on the host) and their labels: the per-image Python loop is the host work."""
    n, size = images.shape[0], images.shape[-1]
    idx = torch.randint(0, n, (batch,), generator=gen).tolist()
    offs = torch.randint(0, size - crop + 1, (batch, 2), generator=gen).tolist()
    flips = torch.randint(0, 2, (batch,), generator=gen).tolist()
    out = []
    for i, (y, x), f in zip(idx, offs, flips):
        c = images[i, :, y : y + crop, x : x + crop]
        out.append(c.flip(-1) if f else c)
    return torch.stack(out), labels[idx]


def make(variant: str, rank: int, world: int, cuda: bool, **sizes):
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    nimg, size, crop, b, patch, d, hid, layers, ncls = (
        (IMAGES, SIZE, CROP, BATCH, PATCH, WIDTH, HIDDEN, LAYERS, CLASSES)
        if cuda
        else (16, 12, 8, 4, 4, 16, 32, 2, 10)
    )
    g = torch.Generator().manual_seed(0)  # the parameters, the same on every rank
    pdim = 3 * patch * patch
    params = [(torch.randn(d, pdim, generator=g) / pdim**0.5).to(dev, dt)]
    for _ in range(layers):
        params += [
            (torch.randn(hid, d, generator=g) / d**0.5).to(dev, dt),
            (torch.randn(d, hid, generator=g) / hid**0.5 * 0.5).to(dev, dt),
        ]
    params.append((torch.randn(ncls, d, generator=g) / d**0.5).to(dev, dt))
    for p in params:
        p.requires_grad_()
    gd = torch.Generator().manual_seed(1 + rank)  # each rank its own images, crops and flips
    images = torch.randint(0, 256, (nimg, 3, size, size), generator=gd, dtype=torch.uint8)
    labels = torch.randint(0, ncls, (nimg,), generator=gd)
    sizes_ = [p.numel() for p in params]
    kept: list = []

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                x, y = crop_batch(images, labels, gd, b, crop)  # host work
                if cuda:
                    x, y = x.pin_memory(), y.pin_memory()
                x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
                x = (x.to(dt) - 128.0) / 64.0
                np_ = crop // patch
                x = (
                    x.reshape(b, 3, np_, patch, np_, patch)
                    .permute(0, 2, 4, 1, 3, 5)
                    .reshape(b, np_ * np_, pdim)
                )
                h = F.linear(x, params[0])
                for i in range(layers):
                    w1, w2 = params[1 + 2 * i : 3 + 2 * i]
                    h = h + F.linear(F.gelu(F.linear(h, w1)), w2)
                logits = F.linear(h.mean(1), params[-1])
                loss = F.cross_entropy(logits.float(), y)
                loss.backward()
                flat = torch.cat([p.grad.reshape(-1) for p in params])
                dist.all_reduce(flat)
                with torch.no_grad():
                    upd = [u.view_as(p) for u, p in zip(flat.split(sizes_), params)]
                    torch._foreach_add_(params, upd, alpha=-LR / world)
                for p in params:
                    p.grad = None
                kept.append(loss.detach())
                if variant == "bad":
                    dist.barrier()  # every step: the host waits for the GPU (and the other rank)

    def output():
        with torch.no_grad():
            total = torch.stack([p.float().sum() for p in params]).sum()
        return torch.cat([torch.stack(kept).float().cpu(), total.reshape(1).cpu()])

    return loop, output


if __name__ == "__main__":
    main(__doc__, make)
