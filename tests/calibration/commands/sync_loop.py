"""A training-like loop that reads its loss on the host every step (``loss.item()``) and then does
host work (metrics, logging): the sync drains the GPU each step, so the host work cannot overlap
GPU work. The fix keeps the losses on the GPU and reads them once at the end; the host work stays
the same, and now runs while the GPU computes.

    python sync_loop.py --variant bad --steps 20
"""

from __future__ import annotations

import numpy as np
import torch
from _common import parser, run

import kprof


def main() -> None:
    a = parser(__doc__).parse_args()
    cuda = torch.cuda.is_available()
    dev, dt = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    n = 4096 if cuda else 64
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(n, n, device=dev, generator=g).to(dt)
    ws = [(torch.randn(n, n, device=dev, generator=g) / n**0.5).to(dt) for _ in range(4)]
    rng = np.random.default_rng(0)
    history = rng.random(40_000)
    losses: list = []

    def host_work(value: float | None) -> float:
        # What a training script does on the host each step: running statistics over its history.
        return float(np.percentile(np.sort(history), 95)) + (value or 0.0)

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                y = x
                for w in ws:
                    y = torch.relu(y @ w)
                loss = y.float().square().mean()
                if a.variant == "bad":
                    host_work(loss.item())  # a device-to-host copy and a sync every step
                else:
                    losses.append(loss.detach())
                    host_work(None)

    run(torch, loop, a.steps, a.time, a.rounds)
    if losses:
        torch.stack(losses).cpu()


if __name__ == "__main__":
    main()
