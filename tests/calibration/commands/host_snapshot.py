"""A training-like loop that copies a large output to the host every step "for logging"
(``logits.cpu()``, kept as the latest snapshot and one value read from it): each step's 32 MiB
device-to-host copy lands in pageable memory (staged through a pinned bounce buffer at a few GB/s)
and synchronises the host with the GPU, so the next step's launches wait for the copy. The fix
keeps the snapshot on the GPU (the same tensor, no copy) and reads the logged value on the GPU; the
host reads it once, after the loop (CUDA C++ Best Practices Guide, "Data Transfer Between Host and
Device": minimise transfers; keep intermediate data on the device).

Stage ``step`` (one ``kprof.range`` per step): two bf16 GEMMs 8192x1024 @ 1024x1024 (h = relu(x @ w1),
logits = h @ w2, 2*2*8192*1024*1024 = 3.44e10 FLOPs) and the logits' fp32 cast; the copy moves
8192*1024*4 = 33.5 MB per step.

    python host_snapshot.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof


def main() -> None:
    a = parser(__doc__).parse_args()
    cuda = torch.cuda.is_available()
    dev, dt = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    n, d = (8192, 1024) if cuda else (64, 32)
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(n, d, device=dev, generator=g).to(dt)
    w1 = (torch.randn(d, d, device=dev, generator=g) / d**0.5).to(dt)
    w2 = (torch.randn(d, d, device=dev, generator=g) / d**0.5).to(dt)
    logged: list = []
    snapshot: list = [None]

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                logits = (torch.relu(x @ w1) @ w2).float()
                if a.variant == "bad":
                    snapshot[0] = logits.cpu()  # 32 MiB to pageable host memory, a sync, every step
                    logged.append(float(snapshot[0][0, 0]))
                else:
                    snapshot[0] = logits  # stays on the GPU
                    logged.append(logits[0, 0].clone())  # not a view: the step's logits can be freed

    run(torch, loop, a.steps, a.time, a.rounds)
    values = [float(v) for v in logged]  # the good variant's one read, after the loop
    assert all(v == v for v in values), "NaN logged"


if __name__ == "__main__":
    main()
