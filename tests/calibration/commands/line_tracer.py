"""A Python line tracer left installed while the model runs: the script started under a debugger or a
coverage tool (an IDE's "Debug" run, pdb, coverage.py), all of which install a sys.settrace hook that CPython calls
at every function call and every line executed in a traced frame. The model's forward is mostly Python on the
host (nn.Module.__call__ / _call_impl, each module's forward, the functional wrappers): with the hook, each of
those lines also runs the tracer, and the host's launches fall far behind the GPU, which idles. The outputs are
the same either way. The fix: run without the tracer (or trace only the code under test). Sources: the Python
documentation of sys.settrace ("the trace function is invoked ... for each line" of every traced frame) and of
coverage.py ("measurement overhead"); the PyTorch performance tuning guide (host overhead between launches).

Stage ``step`` (one ``kprof.range`` per step): inference (no_grad) on h [64, 512] fp32 through 12 residual
blocks (LayerNorm, Linear 512 x 2048, GELU, Linear 2048 x 512, Dropout in eval: 60 leaf modules, ~60 small
kernels); the output's mean kept. Bad: a coverage-style line tracer (sys.settrace: a per-line hit count, as a
coverage tool keeps) installed around the loop. Good: no tracer.

Per design (H100/H200): the good step ~0.4-0.6 ms, host-bound (~60 module calls and launches, the kernels a few
us each); the tracer runs on every traced line (tens of lines per module call: ~3-5 thousand callbacks a step at
~0.3-1 us): +1.5-4 ms: ~3-6x. The extra time is CPU work between launches (cause "host"), resource None.

    python line_tracer.py --variant bad --steps 20
"""

from __future__ import annotations

import sys
from collections import Counter

import torch
from _common import parser, run
from torch import nn

import kprof

ROWS, DIM, BLOCKS = 64, 512, 12


class Block(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * d, d)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return x + self.drop(self.down(self.act(self.up(self.norm(x)))))


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's output mean), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    r, d = (ROWS, DIM) if cuda else (4, 32)
    torch.manual_seed(0)
    model = nn.Sequential(*[Block(d) for _ in range(BLOCKS)]).to(dev).eval()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(r, d, generator=g).to(dev)
    kept: list = []
    hits: Counter = Counter()

    def tracer(
        frame, event, arg
    ):  # a coverage tool's line collector: every line of every traced frame counted
        if event == "line":
            hits[(frame.f_code.co_filename, frame.f_lineno)] += 1
        return tracer

    def loop(steps: int) -> None:
        if variant == "bad":
            sys.settrace(tracer)
        try:
            for _ in range(steps):
                with kprof.range("step"), torch.no_grad():
                    kept.append(model(x).mean())
        finally:
            if variant == "bad":
                sys.settrace(None)

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
