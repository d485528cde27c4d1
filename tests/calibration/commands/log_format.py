"""A debug log line written with an f-string that formats a tensor, the logger's level above DEBUG: the f-string
is built before ``logger.debug`` looks at the level, so every call runs ``Tensor.__str__`` — PyTorch's Python
printer (torch/_tensor_str.py: the tensor summarised, a formatter fitted to its values — a masked_select, a few
reductions read back —, each printed element formatted in Python) — and the string is thrown away. Nothing fails;
the values are the same. The fix: the logging module's lazy arguments (``logger.debug("... %s", h)``: formatted
only if the record is emitted) or a level check first. Sources: the Python documentation "Logging HOWTO"
("Optimization": the message's arguments are formatted only when the record is handled; avoid expensive calls
when the level is off), pylint's W1203 logging-fstring-interpolation, and the PyTorch performance tuning guide
(host overhead between launches).

Stage ``step`` (one ``kprof.range`` per step): inference on h [256, 512] fp32 through 12 residual blocks (layer
norm, linear 512 x 512, GELU, linear 512 x 512, scaled residual add), the step's output mean kept; a debug line
after every third block (4 a step). Bad: ``log.debug(f"block {i}: h = {h}")``. Good: ``log.debug("block %d: h
= %s", i, h)``. The logger's level is WARNING in both: nothing is printed.

Per design (H100 SXM): the good step ~0.5-0.9 ms (launch-bound, ~75 kernels); each formatting ~0.5-1.5 ms of
Python on the host (a [256, 512] tensor summarised to 6 x 6 values, ~10 small GPU operations and reads back):
bad ~3-6 ms a step: ~4-7x. The extra time is CPU work between launches (cause "host"; its reads back are short
waits, the queue being nearly empty in a host-bound loop), resource None.

    python log_format.py --variant bad --steps 20
"""

from __future__ import annotations

import logging

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

ROWS, DIM, BLOCKS = 256, 512, 12
log = logging.getLogger("calib.log_format")
log.setLevel(logging.WARNING)


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's output mean), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    r, d = (ROWS, DIM) if cuda else (8, 32)
    g = torch.Generator().manual_seed(0)
    layers = [
        (
            (torch.randn(d, d, generator=g) / d**0.5).to(dev),
            (torch.randn(d, d, generator=g) / d**0.5).to(dev),
            (1.0 + 0.1 * torch.randn(d, generator=g)).to(dev),
        )
        for _ in range(BLOCKS)
    ]
    x0 = torch.randn(r, d, generator=g).to(dev)
    kept: list = []

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    h = x0
                    for i, (w1, w2, gam) in enumerate(layers):
                        z = F.layer_norm(h, (d,), weight=gam)
                        z = F.gelu(z @ w1)
                        h = h + 0.5 * (z @ w2)
                        if i % 3 == 2:
                            if variant == "bad":
                                log.debug(f"block {i}: h = {h}")  # noqa: G004 (the planted f-string)
                            else:
                                log.debug("block %d: h = %s", i, h)
                    kept.append(h.mean())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
