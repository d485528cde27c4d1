"""A loop that uploads each step's 64 MiB batch from pinned host memory with ``non_blocking=True``
and computes on it, the copy issued on the same (default) stream as the compute: the stream runs
its work in order, so each step's host-to-device copy waits for the previous step's compute and
the compute waits for the copy; the copy engine and the SMs take turns. Everything else is as it
should be (pinned memory, asynchronous copies, no syncs). The fix issues the next batch's copy on a
side stream one step ahead (an event orders it before its use; ``record_stream`` for the
allocator), so each copy overlaps the step before it (CUDA C++ Best Practices Guide, "Asynchronous
and Overlapping Transfers with Computation": streams; what DataLoader prefetching does).

Stage ``step`` (one ``kprof.range`` per step): the batch (4096 x 4096 fp32) cast to bf16 and put
through GEMMS = 6 layers y = tanh(y @ w) with w 4096 x 4096: 6 · 2 · 4096³ = 8.25e11 FLOPs
(tensor cores); bytes: the 67 MB batch uploaded, and per layer y and w read and y written
(6 · 3 · 33.5 MB), about 6.7e8 bytes.

GEMMS = 6 was set from the design and checked on the H100 (2026-11-25): the pinned 64 MiB upload took
1230 µs (54.5 GB/s), one layer 202 µs, so the six layers balance it. Measured (wall time per step as record.py times it): bad 2449 µs, good 1387 µs
(+77 %). Both variants' kept outputs identical.

    python serial_copy.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

GEMMS = 6
BATCHES = 4


def make(variant: str, cuda: bool):
    """The step's loop and the outputs it keeps (one row sum per step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    rows, n = (4096, 4096) if cuda else (16, 32)
    g = torch.Generator().manual_seed(0)
    host = [torch.randn(rows, n, generator=g) for _ in range(BATCHES)]
    if cuda:
        host = [h.pin_memory() for h in host]  # pinned in both variants
    w = (torch.randn(n, n, generator=g) / n**0.5).to(dev, torch.bfloat16 if cuda else torch.float32)
    side = torch.cuda.Stream() if (cuda and variant == "good") else None
    it = [0]
    nxt: list = []
    kept: list = []

    def compute(xb) -> None:
        y = xb.to(w.dtype)
        for _ in range(GEMMS):
            y = torch.tanh(y @ w)
        kept.append(y[0].float().sum())  # stays on the GPU

    def fetch(i: int):
        with torch.cuda.stream(side):
            xb = host[i % BATCHES].to(dev, non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        return xb, ev

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                i = it[0]
                it[0] += 1
                if side is None:  # bad (and the CPU): the copy on the compute's stream
                    compute(host[i % BATCHES].to(dev, non_blocking=True))
                    continue
                xb, ev = nxt.pop() if nxt else fetch(i)
                nxt.append(fetch(i + 1))  # the next batch's copy overlaps this step's compute
                torch.cuda.current_stream().wait_event(ev)
                xb.record_stream(torch.cuda.current_stream())
                compute(xb)

    return loop, (lambda: torch.stack(kept).cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
