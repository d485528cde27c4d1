"""Inference through an MLP whose weights were magnitude-pruned to 50 % and then stored as sparse CSR tensors
(``w.to_sparse_csr()``) in the hope that skipping the zeros halves the work: at 50 % unstructured density a
sparse x dense product (cuSPARSE SpMM: a row's nonzeros and column indices walked, the dense operand's rows
gathered by index) is many times slower than the dense GEMM that multiplies the zeros too. PyTorch's
torch.sparse documentation ("...sparse formats ... only pay off at high sparsity: at low sparsity the dense
layout with its optimised kernels is faster"); NVIDIA's notes on sparsity in deep learning (unstructured
sparsity does not accelerate matrix multiplication; only the 2:4 structured pattern runs on the sparse tensor
cores); CUDA C++ Best Practices Guide: regular, coalesced access. Nothing fails and the values are right
(the same products, another summation order). The fix is one change: the pruned weights kept dense.

Stage ``step`` (one ``kprof.range`` per step): a batch of 2048 token columns (features x tokens, fp32, a pool
of 4) through 2 layers Z = W2 · relu(W1 · X), W 2048 x 2048 with half its entries zero (random pattern), fp32
(the default full-precision matmul: no TF32); the kept output each step's sum of Z. The model: the dense
GEMMs, 2·2·2048³ = 3.4e10 FLOPs (FP32, no tensor cores); bytes: the weights (2 x 16 MB), X, the hidden
activations and Z (16 MB each, the hidden written and read): ~1.1e8.

Per design (H100 SXM): good ~0.7-1 ms a step (cuBLAS SGEMM at ~40-50 TFLOP/s); bad: cuSPARSE CSR SpMM over
2.1M nonzeros a layer, 2048 dense columns, at ~1-4 TFLOP/s of the nonzeros' 1.7e10 FLOPs: ~4-17 ms: ~5-20x.
The bad step runs the work on a slow, irregular path (index loads and gathers) where the dense path exists
(cause "move_work"; the sparse kernel's own limiter is not known by design: resource None).

    python sparse_half_dense.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

WIDTH, TOKENS, LAYERS, DENSITY = 2048, 2048, 2, 0.5


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's output sum), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    d, t = (WIDTH, TOKENS) if cuda else (64, 32)
    g = torch.Generator().manual_seed(0)
    weights = []
    for _ in range(LAYERS):
        w = torch.randn(d, d, generator=g) / (DENSITY * d) ** 0.5
        # Magnitude pruning to 50 %: the smaller half of the entries set to zero (a random pattern).
        w = torch.where(w.abs() >= w.abs().flatten().median(), w, torch.zeros(()))
        w = w.to(dev)
        # The planted switch: the pruned weights stored as sparse CSR tensors, or kept dense.
        weights.append(w.to_sparse_csr() if variant == "bad" else w)
    xs = [torch.randn(d, t, generator=g).to(dev) for _ in range(4)]
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            x = xs[state["i"] % len(xs)]
            state["i"] += 1
            with kprof.range("step"), torch.no_grad():
                h = x
                for j, w in enumerate(weights):
                    h = w @ h
                    if j < len(weights) - 1:
                        h = torch.relu(h)
                kept.append(h.sum())

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
