"""A training loop whose DataLoader runs with ``num_workers=0`` (the default): every sample's decode and
augmentation (numpy, ~0.1 ms a sample) runs on the training loop's own thread, between the steps, while the GPU
waits; the step's GPU work (a small MLP classifier, forward, backward, SGD) is a fraction of that host time
(PyTorch's performance tuning guide: "enable async data loading and augmentation", num_workers > 0 with
pin_memory; the DataLoader's docs: with num_workers=0 data is loaded in the main process). Nothing fails and
the values are right. The fix is one change: 8 worker processes (persistent, 4 batches prefetched each) make the
batches in parallel with the loop.

Stage ``step`` (one ``kprof.range`` per step, the batch's fetch included): a batch of 256 samples, each a 3 x
72 x 72 uint8 image made from its index (a seeded generator standing in for the decode), cropped to 56 x 56 at
an index-dependent offset, mirrored for odd indices, converted to float and normalised per channel; collated,
pinned and copied (non_blocking) to the GPU; flattened (9408 features) through Linear 9408 → 2048, ReLU, Linear
2048 → 2048, ReLU, Linear 2048 → 1000 in bf16, cross-entropy with the index's label, backward, SGD. The model:
the GEMMs forward and backward, 3·2·256·(9408·2048 + 2048·2048 + 2048·1000) = 3.9e10 FLOPs (tensor cores,
bf16); the bytes: the weights read forward and backward, their gradients written and read by the update and
the weights rewritten (5 · 51 MB), the batch (9.6 MB fp32 copied, read and rewritten in bf16) and the activations: 2.85e8.

Per design (H100 SXM, 16 CPU cores): bad ~256 · ~0.1 ms ≈ 25 ms of host work a step, the GPU's ~0.3 ms idle
behind it; good: 8 workers make a batch each ~25 ms, ~3 ms a batch together, ahead of the loop: ~5-8x (cause
"host": the loop's own thread busy with data preparation; the GPU idles between steps).

Measured (H100, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 18.0 ms (~70 µs a
sample on the loop's thread), good 4.45 ms (the 8 workers' pace, ~36 ms a batch each: the good step is still
host-paced, in parallel); the recorded profiles' totals 225 µs in both (record.log): +305 %.
The kept losses are identical.

    python dataloader_workers.py --variant bad --steps 20
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, SIDE, CROP, CLASSES, HIDDEN, WORKERS = 256, 72, 56, 1000, 2048, 8
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)[:, None, None] * 255
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)[:, None, None] * 255


class Images(torch.utils.data.Dataset):
    """Synthetic images: sample i's pixels from a generator seeded by i (the decode), then a crop at an
    i-dependent offset, a mirror for odd i and per-channel normalisation (the augmentation); label i % classes."""

    def __init__(self, n: int, side: int, crop: int, classes: int):
        self.n, self.side, self.crop, self.classes = n, side, crop, classes

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        img = np.random.default_rng(i).integers(0, 256, (3, self.side, self.side), dtype=np.uint8)
        o = i % (self.side - self.crop + 1)
        img = img[:, o : o + self.crop, o : o + self.crop]
        if i % 2:
            img = img[:, :, ::-1]
        x = (img.astype(np.float32) - MEAN) / STD
        return torch.from_numpy(np.ascontiguousarray(x)), i % self.classes


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, side, crop, classes, hidden = (BATCH, SIDE, CROP, CLASSES, HIDDEN) if cuda else (8, 12, 8, 10, 32)
    g = torch.Generator().manual_seed(0)
    dims = [3 * crop * crop, hidden, hidden, classes]
    params = [
        (torch.randn(o, i, generator=g) / i**0.5).to(dev, dt).requires_grad_() for i, o in zip(dims, dims[1:])
    ]
    opt = torch.optim.SGD(params, lr=1e-2)
    # The planted switch: data loading in the loop's own process (num_workers=0, the default) or in workers.
    workers = {"num_workers": WORKERS if cuda else 2, "persistent_workers": True, "prefetch_factor": 4}
    loader = torch.utils.data.DataLoader(
        Images(1 << 30, side, crop, classes),
        batch_size=b,
        pin_memory=cuda,
        **(workers if variant == "good" else {}),
    )
    kept: list = []
    state: dict = {}

    def loop(steps: int) -> None:
        if "it" not in state:
            state["it"] = iter(loader)
        for _ in range(steps):
            with kprof.range("step"):
                x, y = next(state["it"])
                x = x.to(dev, non_blocking=True).flatten(1).to(dt)
                y = y.to(dev, non_blocking=True)
                h = x
                for j, w in enumerate(params):
                    h = F.linear(h, w)
                    if j < len(params) - 1:
                        h = F.relu(h)
                loss = F.cross_entropy(h.float(), y)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                kept.append(loss.detach())

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
