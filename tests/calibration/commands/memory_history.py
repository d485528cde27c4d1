"""The CUDA caching allocator's memory-history recording left on while the model trains: a memory snapshot was
wanted once (torch.cuda.memory._record_memory_history(), then _dump_snapshot() for the memory viz tool, as the
PyTorch guide "Understanding CUDA Memory Usage" shows) and the recording was never switched off. With it on, the
allocator records every allocation and free with its context: a Python stack and a C++ stack (unwound) captured
on the host at each event, kept in a ring of up to max_entries. A training step of a small model allocates and
frees a few hundred tensors, so each step adds a few hundred stack captures to the host's launch path while the
GPU waits. The losses are the same either way. The fix: stop the recording
(torch.cuda.memory._record_memory_history(enabled=None)) once the snapshot is taken, or record only around the
steps to be inspected. Sources: the PyTorch documentation "Understanding CUDA Memory Usage"
(torch.cuda.memory._record_memory_history: "Python and C++ stack traces" recorded for each allocation), the PyTorch
blog "Understanding GPU Memory 1: Visualizing All Allocations over Time" (2023); the PyTorch performance tuning
guide (host work between launches).

Stage ``step`` (one ``kprof.range`` per step): a training step of an MLP of 16 blocks (Linear 256 x 256,
LayerNorm, GELU) on x [64, 256] fp32: MSE against a fixed target, backward, AdamW (foreach); the loss kept. Bad:
the memory-history recording on (max_entries=100000, the guide's example) around the loop. Good: not recording.
(On the CPU both variants run without it: the recording is the CUDA allocator's.)

Per design (H100/H200): the good step ~1-1.5 ms, host-bound (~150 small kernels); ~300-500 allocations and frees
a step, each with a Python and a C++ stack captured (~3-10 us each): +1.5-4 ms: ~2-4x. The extra time is CPU
work between launches (cause "host"), resource None.

    python memory_history.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run
from torch import nn

import kprof

ROWS, DIM, BLOCKS = 64, 256, 16


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    r, d = (ROWS, DIM) if cuda else (8, 32)
    torch.manual_seed(0)
    layers = []
    for _ in range(BLOCKS):
        layers += [nn.Linear(d, d), nn.LayerNorm(d), nn.GELU()]
    model = nn.Sequential(*layers).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(r, d, generator=g).to(dev)
    target = torch.randn(r, d, generator=g).to(dev)
    kept: list = []
    record = variant == "bad" and cuda

    def loop(steps: int) -> None:
        if record:  # the snapshot's recording, left on
            torch.cuda.memory._record_memory_history(max_entries=100000)
        try:
            for _ in range(steps):
                with kprof.range("step"):
                    loss = nn.functional.mse_loss(model(x), target)
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    kept.append(loss.detach())
        finally:
            if record:
                torch.cuda.memory._record_memory_history(enabled=None)

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
