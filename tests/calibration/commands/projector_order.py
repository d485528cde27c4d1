"""A loop that removes a learned low-rank subspace from the activations of each of 4 layers (concept
erasure / a projection-based adapter), written as the formula reads, ``h - h @ (U @ U.T)``: the 4096 x
4096 projector is built from U (4096 x 64) and multiplied into the 16384 x 4096 activations, a 550 GFLOP
GEMM per layer, where the same product taken in the other order, ``h - (h @ U) @ U.T``, is two thin GEMMs
of 8.6 GFLOP each (CUDA C++ Best Practices Guide, "Instruction optimization": do the least work that
gives the result; the matrix-chain order). Nothing fails and the values agree (to rounding). The fix is
that one change: the parentheses moved.

Stage ``step`` (one ``kprof.range`` per step): 4 layers of h = h - h @ P_l with P_l = U_l U_l^T (U_l
orthonormal columns, bf16), h of 16384 tokens x 4096 features (bf16), the row means kept. The model (the
work the result needs): per layer the two thin GEMMs, 2·2·N·D·K, and the subtraction, N·D (tensor cores,
bf16) — 4 layers 6.9e10 FLOPs; the bytes: h read by the first thin GEMM and by the subtraction and the new
h written once (3·N·D·2), U read twice, the thin intermediate written and read (2·N·K·2), the kept means —
per layer ~4.1e8, 4 layers 1.63e9.

Per design (H100 SXM): good ~4 x ~0.25 ms (memory-bound: eager, the N x D product is written and read
once more) ≈ 1 ms per step; bad 4 x (0.55 TFLOP / ~600 TFLOP/s ≈ 0.9 ms + the same elementwise traffic)
≈ 4.5 ms: ~4x, the tensor pipe busy with work the result does not need.

Measured (H100, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 4421 µs, good 1356 µs:
+226 % (quick check: 3966 against 1295 µs). The kept outputs agree to 1.4e-4 (bf16, another order).

    python projector_order.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

TOKENS, WIDTH, RANK, LAYERS = 16384, 4096, 64, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's row means), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    n, d, k = (TOKENS, WIDTH, RANK) if cuda else (64, 48, 4)
    g = torch.Generator().manual_seed(0)
    us = [torch.linalg.qr(torch.randn(d, k, generator=g))[0].to(dev, dt) for _ in range(LAYERS)]
    x = torch.randn(n, d, generator=g).to(dev, dt)
    kept: list = []

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                h = x
                for u in us:
                    if variant == "bad":
                        h = h - h @ (u @ u.T)
                    else:
                        h = h - (h @ u) @ u.T
                kept.append(h.float().mean(dim=1))

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
