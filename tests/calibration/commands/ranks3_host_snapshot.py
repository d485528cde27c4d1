"""A data-parallel training loop on 2 ranks (NCCL, one GPU each) that keeps an in-memory snapshot of the
weights for fault tolerance (to restart from the last step without reading a checkpoint from disk) and
refreshes it after every step by copying each parameter into a CPU tensor (``snap.copy_(p)``, pageable
host memory): every step 33.5 MB leave each GPU over PCIe, synchronously (the host waits for the copy, the
GPU's next step waits for the host). PyTorch's CUDA semantics notes: copies from the GPU into pageable host
memory are synchronous; host<->device bandwidth is far below the device's. Nothing fails and the values are
right. The fix is one change: the snapshot kept on the GPU (a device-to-device copy), copied to the host
only when it is saved.

Stage ``step`` (one ``kprof.range`` per step on each rank): 4096 tokens a rank through 4 residual MLP layers
of width 1024 (1024 → 2048 → 1024, GELU, no biases) in bf16, a squared-output loss, backward, one all-reduce
of the flat gradients (16.8 M, 33.5 MB in bf16), SGD, then the snapshot of the 8 parameter tensors. 6 · 16.8
M · 4096 = 4.1e11 FLOPs a rank a step.

Per design (2 x H100 SXM, NVLink; PCIe Gen5, ~5-20 GB/s for pageable copies): the GPU's step ~1.5-2 ms; the
snapshot ~0.05 ms on the GPU, 33.5 MB over PCIe into pageable memory ~2-7 ms: bad ~4-9 ms, good ~2 ms per
step (> 2x). Both ranks alike (no straggler planted).

The kept outputs (each rank's loss per step, its parameters' sum and its snapshot's sum at the end) are
identical in both variants: the snapshot holds the same bits wherever it lives (its sum taken on the CPU in
both: a first GPU check found the sums over the device snapshot and the host one apart, by summation order).

    python ranks3_host_snapshot.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from _ranks import main

import kprof

LAYERS, WIDTH, HIDDEN, TOKENS, BATCHES, LR = 4, 1024, 2048, 4096, 4, 1e-3


def make(variant: str, rank: int, world: int, cuda: bool, **sizes):
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    layers, d, hid, t = (LAYERS, WIDTH, HIDDEN, TOKENS) if cuda else (2, 16, 32, 8)
    layers, d, hid, t = (
        sizes.get(k, v) for k, v in (("layers", layers), ("width", d), ("hidden", hid), ("tokens", t))
    )
    g = torch.Generator().manual_seed(0)  # the same parameters on every rank
    params = []
    for _ in range(layers):
        params += [
            (torch.randn(hid, d, generator=g) / d**0.5).to(dev, dt),
            (torch.randn(d, hid, generator=g) / hid**0.5 * 0.5).to(dev, dt),
        ]
    for p in params:
        p.requires_grad_()
    where = "cpu" if variant == "bad" else dev  # bad: the snapshot in (pageable) host memory
    snapshot = [torch.empty(p.shape, dtype=dt, device=where) for p in params]
    gr = torch.Generator().manual_seed(1 + rank)  # each rank its own data
    batches = [torch.randn(t, d, generator=gr).to(dev, dt) for _ in range(BATCHES)]
    sizes_ = [p.numel() for p in params]
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            h = batches[state["i"] % BATCHES]
            state["i"] += 1
            with kprof.range("step"):
                for i in range(layers):
                    w1, w2 = params[2 * i : 2 * i + 2]
                    h = h + F.linear(F.gelu(F.linear(h, w1)), w2)
                loss = h.float().pow(2).mean()
                loss.backward()
                flat = torch.cat([p.grad.reshape(-1) for p in params])
                dist.all_reduce(flat)
                with torch.no_grad():
                    upd = [u.view_as(p) for u, p in zip(flat.split(sizes_), params)]
                    torch._foreach_add_(params, upd, alpha=-LR / world)
                    for s, p in zip(snapshot, params):  # the step's snapshot (bad: to the host)
                        s.copy_(p)
                for p in params:
                    p.grad = None
                kept.append(loss.detach())

    def output():
        with torch.no_grad():
            total = torch.stack([p.float().sum() for p in params]).sum()
            snap = torch.stack([s.cpu().float().sum() for s in snapshot]).sum()  # summed on the CPU
        return torch.cat([torch.stack(kept).float().cpu(), total.reshape(1).cpu(), snap.reshape(1)])

    return loop, output


if __name__ == "__main__":
    main(__doc__, make)
