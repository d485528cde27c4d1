"""A graph network's training step run with ``torch.use_deterministic_algorithms(True)`` left on from a
"reproducibility" helper (Hugging Face's ``enable_full_determinism``, Lightning's ``deterministic=True``, a
seed-everything snippet): message passing sums each edge's message into its destination node with
``index_add_`` (and ``index_select``, whose gradient is an ``index_add_``), which on CUDA is a fast atomic
scatter; in deterministic mode PyTorch swaps it for a sort-based ``index_put_(accumulate=True)`` (the indices
sorted, then each destination's run of messages summed in order), several times the work and the memory
passes, for bit-reproducible sums the run does not need. The fix is the default (deterministic algorithms
off); the losses agree to float rounding. Sources: the PyTorch documentation of
``torch.use_deterministic_algorithms`` (index_add_ on CUDA among the operations given a deterministic
implementation) and its "Reproducibility" notes ("deterministic operations are often slower than
nondeterministic operations"); Hugging Face Transformers' ``enable_full_determinism``; PyTorch Geometric's
scatter-based message passing.

Stage ``step`` (one ``kprof.range`` per step): a graph of 32,768 nodes and 1,048,576 random directed edges
(in-degree 32 on average), 128 fp32 features, three layers of h = relu(mean over in-edges of (h W)[src] +
h W_self) (an ``index_select`` of the source rows, an ``index_add_`` into the destinations, the degree
normalisation), MSE against fixed targets, backward, a foreach SGD step. The CUBLAS_WORKSPACE_CONFIG that
deterministic mode requires is set in both variants (the same cuBLAS configuration).

Per design (H100 SXM): good ~2-4 ms a step (gathers of 1M x 128 rows and atomic scatter-adds, ~0.5 GB each,
the small GEMMs); bad the six scatter-adds a step (three forward, three in the gathers' backward) as
sort-and-reduce: ~2-4x. The extra time is a costlier method for the same sums (cause "move_work"; the sort
and reduce kernels' limiter is not known in advance: resource None).

    python deterministic_index_add.py --variant bad --steps 20
"""

from __future__ import annotations

import os

os.environ.setdefault(
    "CUBLAS_WORKSPACE_CONFIG", ":4096:8"
)  # before CUDA starts: required by deterministic mode

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from _common import parser, run  # noqa: E402

import kprof  # noqa: E402

NODES, EDGES, FEATS, LAYERS, POOL = 32768, 1 << 20, 128, 3, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    # The planted switch: deterministic algorithms on (sort-based index_add_) or the default.
    torch.use_deterministic_algorithms(variant == "bad")
    n, e, f = (NODES, EDGES, FEATS) if cuda else (64, 512, 8)
    g = torch.Generator().manual_seed(0)
    src = torch.randint(0, n, (e,), generator=g).to(dev)
    dst = torch.randint(0, n, (e,), generator=g).to(dev)
    inv_deg = 1.0 / torch.bincount(dst.cpu(), minlength=n).clamp(min=1).float().to(dev)[:, None]
    params = []
    for _ in range(LAYERS):
        params += [(torch.randn(f, f, generator=g) / f**0.5).to(dev).requires_grad_() for _ in range(2)]
    feats = [torch.randn(n, f, generator=g).to(dev) for _ in range(POOL)]
    targets = [torch.randn(n, f, generator=g).to(dev) for _ in range(POOL)]
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            k = state["i"] % POOL
            state["i"] += 1
            with kprof.range("step"):
                h = feats[k]
                for layer in range(LAYERS):
                    w, w_self = params[2 * layer], params[2 * layer + 1]
                    msg = torch.index_select(h @ w, 0, src)
                    agg = torch.zeros_like(h).index_add_(0, dst, msg)
                    h = F.relu(agg * inv_deg + h @ w_self)
                loss = F.mse_loss(h, targets[k])
                loss.backward()
                with torch.no_grad():
                    torch._foreach_add_(params, [p.grad for p in params], alpha=-1e-2)
                    for p in params:
                        p.grad = None
                kept.append(loss.detach())

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
