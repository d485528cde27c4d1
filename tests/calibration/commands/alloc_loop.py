"""A loop over batches of varying length (sequence lengths 512..4096 tokens, as a bucketed data
loader gives) through a two-layer MLP, that calls ``torch.cuda.empty_cache()`` after every step
"to keep memory low": the caching allocator hands its blocks back, so every step's activations go
to ``cudaMalloc`` again and ``cudaFree`` (which synchronises the device) returns them. The fix
preallocates the activations once at the longest length and writes each step into slices of them.

    python alloc_loop.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof


def main() -> None:
    a = parser(__doc__).parse_args()
    cuda = torch.cuda.is_available()
    dev, dt = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    d, hidden, lengths = (
        (1024, 4096, [512, 1536, 4096, 1024, 2560, 3072, 768, 2048]) if cuda else (32, 64, [8, 16])
    )
    g = torch.Generator(device=dev).manual_seed(0)
    w1 = (torch.randn(d, hidden, device=dev, generator=g) / d**0.5).to(dt)
    w2 = (torch.randn(hidden, d, device=dev, generator=g) / hidden**0.5).to(dt)
    src = torch.randn(max(lengths), d, device=dev, generator=g).to(dt)
    longest = max(lengths)
    buf_h = torch.empty(longest, hidden, device=dev, dtype=dt)
    buf_y = torch.empty(longest, d, device=dev, dtype=dt)
    it = [0]

    def step() -> None:
        n = lengths[it[0] % len(lengths)]
        it[0] += 1
        x = src[:n]
        if a.variant == "bad":
            h = torch.nn.functional.gelu(x @ w1)
            y = x + h @ w2
            y.mul_(0.5)
            del h, y
            if cuda:
                torch.cuda.empty_cache()
        else:
            h, y = buf_h[:n], buf_y[:n]
            torch.matmul(x, w1, out=h)
            torch.nn.functional.gelu(h, out=h)
            torch.matmul(h, w2, out=y)
            y.add_(x).mul_(0.5)

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                step()

    # Every length once before the profiled steps: cuBLAS loads and plans each new shape once.
    run(torch, loop, a.steps, a.time, a.rounds, warmup=len(lengths))


if __name__ == "__main__":
    main()
