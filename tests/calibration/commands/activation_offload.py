"""Activations offloaded to the host during training though they fit on the GPU: the training step runs inside
torch.autograd.graph.save_on_cpu(pin_memory=True) (kept from a large-model recipe, or turned on once against an
out-of-memory error at a larger batch), so every tensor autograd saves for the backward is copied to pinned host
memory in the forward (a synchronous device-to-host copy each) and copied back in the backward; the GPU waits on
the host link at every saved tensor. The losses are the same either way. The fix: no offloading when the
activations fit (or offload only the layers that need it). Sources: the PyTorch documentation of
torch.autograd.graph.save_on_cpu and the "Hooks for saved tensors" tutorial ("this trades memory for host-device
transfers"); the CUDA C++ Best Practices Guide ("Data Transfer Between Host and Device": minimise transfers).

Stage ``step`` (one ``kprof.range`` per step): a training step of 4 blocks (Linear 4096 x 4096, GELU) on x
[4096, 4096] bf16, the mean square of the output as the loss, SGD (foreach); the loss kept. Bad: the step inside
save_on_cpu(pin_memory=True). Good: no offloading.

Per design (H100/H200): the good step ~2.5-3.5 ms (12 GEMMs of 137 GFLOP on the tensor cores); the bad step moves
every saved tensor to the host and back (each block's Linear input and weight and GELU input, 3 x 32 MB, and the
loss's 64 MB fp32 square input: ~0.45 GB each way, ~0.9 GB a step over a ~50 GB/s link, the forward's copies
synchronous): +12-18 ms: ~4-7x. The extra time is host-device transfers in
the step (cause "copy"), resource None.

    python activation_offload.py --variant bad --steps 20
"""

from __future__ import annotations

import contextlib

import torch
from _common import parser, run
from torch import nn

import kprof

ROWS, DIM, BLOCKS = 4096, 4096, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    r, d = (ROWS, DIM) if cuda else (8, 32)
    torch.manual_seed(0)
    layers = []
    for _ in range(BLOCKS):
        layers += [nn.Linear(d, d, bias=False), nn.GELU()]
    model = nn.Sequential(*layers).to(dev, dt)
    for m in model:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=d**-0.5)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(r, d, generator=g).to(dev, dt)
    kept: list = []

    def offload():
        if variant == "bad":
            return torch.autograd.graph.save_on_cpu(pin_memory=cuda)
        return contextlib.nullcontext()

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                with offload():
                    loss = model(x).float().square().mean()
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                opt.step()
                kept.append(loss.detach())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
