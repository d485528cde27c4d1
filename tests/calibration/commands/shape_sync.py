"""A stack of 8 layers, each of which gates its activations with a data-dependent shape: the
entries above a threshold are selected (``h[h > t]``, a boolean-mask index: ``nonzero`` must
count them before the result can be allocated, so the host waits for the GPU in every layer) and
their mean feeds the next layer. The fix keeps the shape fixed: a mask multiplied in, the sum and
count of the selected entries computed on the GPU, no sync.

    python shape_sync.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof


def main() -> None:
    a = parser(__doc__).parse_args()
    cuda = torch.cuda.is_available()
    dev, dt = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    rows, n = (4096, 1024) if cuda else (64, 32)
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(rows, n, device=dev, generator=g).to(dt)
    ws = [(torch.randn(n, n, device=dev, generator=g) / n**0.5).to(dt) for _ in range(8)]

    def layer(h, w):
        h = torch.tanh(h @ w)
        m = h > 0.5
        if a.variant == "bad":
            sel = h[m]  # data-dependent shape: nonzero, a device-to-host copy of the count, a sync
            centre = sel.float().mean()
        else:
            centre = (h.float() * m).sum() / m.sum().clamp_min(1)  # the same value, fixed shapes
        return h - centre.to(h.dtype)

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                h = x
                for w in ws:
                    h = layer(h, w)

    run(torch, loop, a.steps, a.time, a.rounds)


if __name__ == "__main__":
    main()
