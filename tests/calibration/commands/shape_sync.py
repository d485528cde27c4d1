"""A stack of 8 layers, each of which gates its activations with a data-dependent shape: the
entries above a threshold are selected (``h[h > t]``, a boolean-mask index: ``nonzero`` must
count them before the result can be allocated, so the host waits for the GPU in every layer) and
their mean feeds the next layer. The fix keeps the shape fixed: a mask multiplied in, the sum and
count of the selected entries computed on the GPU, no sync.

    python shape_sync.py --variant bad --steps 20

Each layer's GPU work (a 4096 x 4096 x 4096 bf16 matmul and elementwise passes over 16 M values)
is about as long as the host's issuing of it, so the syncs serialise the two. ``--n 1024`` makes
the GPU's work far shorter than the host's: the loop is then launch-bound and the fix gains
nothing (recorded as "shape sync, launch-bound").
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--n", type=int, default=4096, help="the layers' width on a GPU")
    a = ap.parse_args()
    cuda = torch.cuda.is_available()
    dev, dt = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    rows, n = (4096, a.n) if cuda else (64, 32)
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
