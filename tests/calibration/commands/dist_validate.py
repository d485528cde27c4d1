"""torch.distributions' argument validation left on (its default) in a model's forward: every
``Normal(loc, scale)`` checks its parameters against their constraints and every ``log_prob(value)`` checks
the value against the support, each check ending in ``if not torch._is_all_true(valid): raise ValueError``,
a Python bool of a GPU tensor: the host copies the flag back and waits for the GPU, which drains its queue
and idles while the host launches the next kernels. Validation is on unless Python runs with -O
(``Distribution._validate_args = __debug__``). Nothing fails; the outputs are the same. The fix:
``validate_args=False`` (or ``torch.distributions.Distribution.set_default_validate_args(False)``) once the
model is debugged. Sources: the PyTorch documentation of torch.distributions.Distribution
(``set_default_validate_args``: "validation may be expensive, so you may want to disable it once a model is
working"), the Pyro documentation ("pyro.enable_validation(False)" for speed), and the CUDA C++ Best
Practices Guide ("Asynchronous and Overlapping Transfers with Computation": a blocking host call ends the
overlap of host and device work).

Stage ``step`` (one ``kprof.range`` per step): inference (torch.inference_mode) on h [2048, 1024] bf16 through
8 stochastic layers: p = h @ W (W [1024, 2048]), loc, s = p.chunk(2), d = Normal(loc, softplus(s) + 1e-3),
the log-density of a fixed target summed (``d.log_prob(t).sum(-1)``), h = tanh(loc); the step's summed
log-density mean kept. Bad: ``validate_args`` left at its default (on): per layer 3 checks (loc real, scale
positive, the value real), 3 host waits a layer, 24 a step. Good: ``validate_args=False``.

Per design (H100 SXM): a layer's GPU work ~40-60 µs (a 8.6 GFLOP GEMM, ~8 elementwise kernels on 4 MB),
its host work ~100-150 µs (launches and the Distribution's Python); good: the launches run ahead of the GPU
(~1-1.2 ms a step); bad: every check drains the queue and adds a device-to-host copy, the GPU idle while the
host prepares the next kernels (~2-2.5 ms a step): ~1.7-2.2x. The extra time is the host waiting for the
GPU at each check (cause "sync"), resource None.

    python dist_validate.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run
from torch.distributions import Normal

import kprof

ROWS, DIM, LAYERS = 2048, 1024, 8


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's summed log-density mean), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    r, d = (ROWS, DIM) if cuda else (16, 32)
    g = torch.Generator().manual_seed(0)
    weights = [(torch.randn(d, 2 * d, generator=g) / d**0.5).to(dev, dt) for _ in range(LAYERS)]
    h0 = torch.randn(r, d, generator=g).to(dev, dt)
    target = (0.5 * torch.randn(r, d, generator=g)).to(dev, dt)
    # the planted default: None = Distribution._validate_args (on); the fix turns it off
    validate = None if variant == "bad" else False
    kept: list = []

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    h, lp = h0, None
                    for w in weights:
                        loc, s = (h @ w).chunk(2, dim=-1)
                        dist = Normal(loc, F.softplus(s) + 1e-3, validate_args=validate)
                        term = dist.log_prob(target).float().sum(-1)
                        lp = term if lp is None else lp + term
                        h = torch.tanh(loc)
                    kept.append(lp.mean())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
