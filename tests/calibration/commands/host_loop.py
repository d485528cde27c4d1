"""A loop whose batches are made on the host (numpy: 64 x 4096 random values, normalised per row)
and copied to the GPU each step, for a GPU step shorter than that host work (8 matmuls of 1024 x
4096 x 4096 on the batch tiled 16 times): the GPU waits for the host. The fix makes the same
batches on the GPU.

    python host_loop.py --variant bad --steps 20
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
    rows, n, tiles = (64, 4096, 16) if cuda else (8, 64, 2)
    g = torch.Generator(device=dev).manual_seed(0)
    w = (torch.randn(n, n, device=dev, generator=g) / n**0.5).to(dt)
    rng = np.random.default_rng(0)

    def batch():
        if a.variant == "bad":
            b = rng.standard_normal((rows, n), dtype=np.float32)
            b = (b - b.mean(axis=1, keepdims=True)) / (b.std(axis=1, keepdims=True) + 1e-6)
            return torch.from_numpy(b).to(dev).to(dt)
        b = torch.randn(rows, n, device=dev, generator=g)
        return ((b - b.mean(dim=1, keepdim=True)) / (b.std(dim=1, keepdim=True) + 1e-6)).to(dt)

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                y = batch().repeat(tiles, 1)
                for _ in range(8):
                    y = torch.tanh(y @ w)

    run(torch, loop, a.steps, a.time, a.rounds)


if __name__ == "__main__":
    main()
