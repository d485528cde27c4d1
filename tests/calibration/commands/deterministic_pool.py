"""A graph batch's sum pooling run with deterministic algorithms forced on: a graph-level readout (PyG's
``global_add_pool``: node features summed into their graph's row with a scatter-add, ``index_add_``) in a
script that calls ``torch.use_deterministic_algorithms(True)`` for reproducibility. On CUDA,
``index_add_`` then no longer adds with atomics: it becomes ``index_put_(..., accumulate=True)``, which
sorts the indices and walks each run of equal indices (every node of a graph) serially, one feature row
after another, so a graph of thousands of nodes is thousands of dependent steps. Nothing fails and the
sums agree up to the order of the additions. The fix: the deterministic mode off for this op (the
documented ``torch.use_deterministic_algorithms(False)`` around it, or ``warn_only``), the atomic kernel.
Sources: the PyTorch documentation of torch.use_deterministic_algorithms (index_add_ on CUDA listed among
the ops given a deterministic implementation) and its "Reproducibility" notes ("deterministic operations
are often slower than nondeterministic operations"); PyTorch pull requests #56521 (index_add_'s
deterministic path through index_put_ with accumulate) and #171381 (the sort-based accumulate "10-100x"
slower than atomics with many duplicate indices); PyTorch Geometric's global_add_pool.

Stage ``step`` (one ``kprof.range`` per step): node features x [1,048,576, 64] fp32 of a batch of 128
graphs (8,192 nodes each, the batch vector sorted, as a graph loader builds it), h = relu(x · a + b)
(per-feature affine, fp32), pooled [128, 64] = zeros.index_add_(0, batch, h), a fixed projection of the
pooled rows kept. Bad: the loop under torch.use_deterministic_algorithms(True) (with
torch.utils.deterministic.fill_uninitialized_memory off, so that the only difference is the scatter-add's
algorithm). Good: the default (atomic) index_add_. The same sums up to rounding.

Per design (H100 SXM): the affine + relu ~0.35 ms (512 MB moved); the atomic scatter-add ~0.2-0.5 ms
(256 MB read, 67 M atomic adds over 8,192 addresses): good ~0.6-0.9 ms a step; bad: h multiplied by
alpha into a copy (~0.17 ms), the 1 M indices sorted (~0.1 ms) and 128 runs of 8,192 rows walked serially
(a dependent load-add-store chain per feature: ~0.2-1 µs a row): ~2-8 ms: ~3-10x. The extra time is the
deterministic scatter-add's method (cause "move_work": a costlier library method for the same sums),
resource None (a latency-bound chain of dependent steps, not a pipe).

    python deterministic_pool.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.utils.deterministic
from _common import parser, run

import kprof

NODES, FEAT, GRAPHS = 1 << 20, 64, 128


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's projected pooled features), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    n, f, g = (NODES, FEAT, GRAPHS) if cuda else (512, 16, 8)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(n, f, generator=gen).to(dev)
    a = (1.0 + 0.1 * torch.randn(f, generator=gen)).to(dev)
    b = (0.1 * torch.randn(f, generator=gen)).to(dev)
    proj = torch.randn(g, f, generator=gen).to(dev)
    batch = (torch.arange(n) * g // n).to(dev)  # sorted graph ids, n / g nodes a graph
    kept: list = []

    def loop(steps: int) -> None:
        mode, fill = (
            torch.are_deterministic_algorithms_enabled(),
            torch.utils.deterministic.fill_uninitialized_memory,
        )
        if variant == "bad":  # the planted form: deterministic algorithms forced on for the whole loop
            torch.use_deterministic_algorithms(True)
            torch.utils.deterministic.fill_uninitialized_memory = False
        try:
            for _ in range(steps):
                with kprof.range("step"):
                    h = torch.relu(torch.addcmul(b, x, a))
                    pooled = torch.zeros(g, f, device=dev).index_add_(0, batch, h)
                    kept.append((pooled * proj).sum())
        finally:
            torch.use_deterministic_algorithms(mode)
            torch.utils.deterministic.fill_uninitialized_memory = fill

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
