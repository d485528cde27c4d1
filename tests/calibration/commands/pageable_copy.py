"""A loop that takes a 32 MiB batch from host memory every step (numpy arrays a data loader made:
pageable memory) and copies it to the GPU with a plain ``.to("cuda")``: the copy is staged through
a pinned bounce buffer by the driver while the host waits, and the GPU's compute cannot start
until it is done. The fix pins the batches (``pin_memory``, as ``DataLoader(pin_memory=True)``
does) and copies the next batch with ``non_blocking=True`` on a side stream while the GPU
computes on the current one (prefetch).

    python pageable_copy.py --variant bad --steps 20
"""

from __future__ import annotations

import numpy as np
import torch
from _common import parser, run

import kprof


def main() -> None:
    a = parser(__doc__).parse_args()
    cuda = torch.cuda.is_available()
    dev = "cuda" if cuda else "cpu"
    rows, n = (2048, 4096) if cuda else (16, 32)
    rng = np.random.default_rng(0)
    host = [rng.standard_normal((rows, n), dtype=np.float32) for _ in range(4)]  # pageable
    g = torch.Generator(device=dev).manual_seed(0)
    w = (torch.randn(n, n, device=dev, generator=g) / n**0.5).to(torch.bfloat16)
    pinned = [torch.from_numpy(b).pin_memory() for b in host] if a.variant == "good" and cuda else None
    side = torch.cuda.Stream() if pinned else None
    it = [0]
    nxt: list = []

    def compute(xb) -> None:
        y = xb.to(torch.bfloat16)
        for _ in range(4):
            y = torch.tanh(y @ w)

    def fetch(i: int):
        with torch.cuda.stream(side):
            xb = pinned[i % len(pinned)].to(dev, non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        return xb, ev

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                i = it[0]
                it[0] += 1
                if pinned is None:
                    compute(torch.from_numpy(host[i % len(host)]).to(dev))
                    continue
                xb, ev = nxt.pop() if nxt else fetch(i)
                nxt.append(fetch(i + 1))  # the next batch's copy overlaps this step's compute
                torch.cuda.current_stream().wait_event(ev)
                xb.record_stream(torch.cuda.current_stream())
                compute(xb)

    run(torch, loop, a.steps, a.time, a.rounds)


if __name__ == "__main__":
    main()
