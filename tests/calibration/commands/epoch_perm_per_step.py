"""A stateless (resumable) sampler that draws each step's batch by regenerating the epoch's random permutation of
the whole GPU-resident dataset from the epoch's seed, ``torch.randperm(N, generator=g.manual_seed(seed +
epoch))[k * B:(k + 1) * B]``, at every step, where the permutation computed once at the start of the epoch and
sliced at each step gives the same batches: ``torch.randperm`` on the GPU draws N random keys and radix-sorts N
(key, index) pairs (several passes over the whole dataset's indices in DRAM), work that does not depend on the
step. Sources: the PyTorch documentation of torch.randperm and torch.utils.data.RandomSampler (one permutation
an epoch, consumed batch by batch); the PyTorch source (aten/src/ATen/native/cuda/Randperm.cu: random keys and
``cub::DeviceRadixSort::SortPairs``); Merrill & Grimshaw, "High Performance and Scalable Radix Sorting" (2011) and
Adinets & Merrill, "Onesweep" (2022) (a radix sort's passes are bound by memory bandwidth); the CUDA C++ Best
Practices Guide ("Memory Optimizations").

Stage ``step`` (one ``kprof.range`` per step, inference): a GPU-resident dataset X [2^26, 32] bf16 (4.3 GB), a
batch of B = 32768 rows gathered by the sampler's indices, an MLP 32 -> 1024 -> 1024 -> 1 (bf16, ReLU) scored on
it, the batch's mean score kept. Bad: at every step, the epoch's permutation regenerated (``torch.randperm(N,
generator=g, device="cuda")`` after ``g.manual_seed(seed + epoch)``) and the step's slice taken. Good: the same
permutation generated once when the epoch starts (2048 steps an epoch) and sliced at every step: the same batches
and the same scores.

Model (the needed work): FLOPs the MLP on the batch, 2 x 32768 x (32 x 1024 + 1024 x 1024 + 1024): 7.1e10;
bytes the batch gathered (2 MiB), the weights (2.2 MB) and the hidden activations written and read once
(4 x 32768 x 1024 x 2 B: 268 MB): ~2.8e8.

Per design (H100/H200): the good step ~0.2-0.35 ms (the 1024 x 1024 GEMM on the tensor cores, the ReLUs, the
gather; ~8 kernels, GPU-bound); the bad step adds randperm over 2^26 indices, ~1.5-4 ms (64-bit keys drawn, then
~4-5 radix-sort passes over 2^26 x 16 B of key-index pairs, each read and written): ~5-12x. The extra time is the sort's DRAM traffic for
a permutation the step does not need to recompute: the needed batch by a costlier method (cause "move_work",
resource "dram").

    python epoch_perm_per_step.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

N, D, H, B = 1 << 26, 32, 1024, 32768
SEED = 1234


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (the batch's mean score a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    n, d, h, b = (N, D, H, B) if cuda else (4096, 8, 32, 256)
    dt = torch.bfloat16 if cuda else torch.float32
    g0 = torch.Generator(device=dev).manual_seed(0)
    x_all = torch.randn(n, d, generator=g0, device=dev, dtype=dt)
    w1 = (torch.randn(d, h, generator=g0, device=dev) / d**0.5).to(dt)
    w2 = (torch.randn(h, h, generator=g0, device=dev) / h**0.5).to(dt)
    w3 = (torch.randn(h, 1, generator=g0, device=dev) / h**0.5).to(dt)
    gen = torch.Generator(device=dev)
    per_epoch = n // b
    kept: list = []
    state = {"step": 0, "epoch": -1, "perm": None}

    def indices():
        s = state["step"]
        state["step"] += 1
        epoch, k = divmod(s, per_epoch)
        if variant == "bad" or epoch != state["epoch"]:
            gen.manual_seed(SEED + epoch)  # the epoch's permutation, from the epoch's seed
            state["perm"] = torch.randperm(n, generator=gen, device=dev)
            state["epoch"] = epoch
        return state["perm"][k * b : (k + 1) * b]

    def step():
        xb = x_all.index_select(0, indices())
        y = torch.relu(xb @ w1)
        y = torch.relu(y @ w2)
        return (y @ w3).float().mean()

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
