"""A per-module timing helper left in the forward: every leaf module is timed with host timers bracketed by
``torch.cuda.synchronize()`` (the usual "synchronise, start the clock, run, synchronise, stop the clock" idiom
for timing GPU code from Python), kept on in a model's forward after a performance investigation ("to log
where the time goes"). Each synchronisation makes the host wait until the GPU has drained, so the host launches
the next module only after the previous one's kernel has finished: the GPU idles for every launch and the host
for every kernel. The outputs are the same. The fix: the helper off (timing taken with a profiler, or with CUDA
events read once after the step). Sources: the CUDA C++ Best Practices Guide, "Timing" ("Using CPU Timers":
"it is necessary to synchronize the CPU thread with the GPU by calling cudaDeviceSynchronize() ... immediately
before starting and stopping the CPU timer"; such synchronisation "stalls the GPU pipeline and thus should be
used sparingly"), the CUDA C++ Programming Guide ("Asynchronous Concurrent Execution", "Explicit
Synchronization"), the PyTorch performance tuning guide ("Avoid unnecessary CPU-GPU synchronization").

Stage ``step`` (one ``kprof.range`` per step): the forward of 32 blocks (Linear 1024 x 1024 with bias, GELU,
LayerNorm: 96 leaf modules, one kernel each) on x [256, 1024] bf16 under ``torch.inference_mode``; the output
kept (on the GPU). Bad: each module's call between two ``torch.cuda.synchronize()`` and ``time.perf_counter()``
(the times summed per module name). Good: the modules called in turn, no timing.

Model (the needed work): FLOPs 32 x 2 x 256 x 1024 x 1024 = 1.7e10 (tensor cores, bf16); bytes: the weights
(64 MB) and ~3 x 32 activations of 0.5 MB read and written: ~1.6e8.

Per design (H100/H200): the good step host-bound, ~96 launches of ~6-8 us: ~0.6-0.8 ms; the bad step per module
~6-8 us to launch, ~3-5 us before the kernel starts, ~3-5 us of kernel, ~3-5 us to wake from the synchronisation
and ~2 us of the two synchronize calls: ~18-25 us, ~1.7-2.4 ms: ~2.5-3x. The extra time is the host waiting for
the GPU at every module with the GPU idle meanwhile (cause "sync"), resource None.

    python layer_timing_sync.py --variant bad --steps 20
"""

from __future__ import annotations

import time
from collections import defaultdict

import torch
from _common import parser, run
from torch import nn

import kprof

ROWS, DIM, BLOCKS = 256, 1024, 32


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's output), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    r, d = (ROWS, DIM) if cuda else (8, 32)
    torch.manual_seed(0)
    layers = []
    for _ in range(BLOCKS if cuda else 4):
        layers += [nn.Linear(d, d), nn.GELU(), nn.LayerNorm(d)]
    model = nn.Sequential(*layers).to(dev, dt)
    mods = list(model.named_children())
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(r, d, generator=g).to(dev, dt)
    times: dict = defaultdict(float)  # the helper's log: seconds per module name
    kept: list = []

    def forward(y):
        for name, m in mods:
            if variant == "bad":
                sync()
                t0 = time.perf_counter()
                y = m(y)
                sync()
                times[name] += time.perf_counter() - t0
            else:
                y = m(y)
        return y

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(forward(x))

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
