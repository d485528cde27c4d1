"""Per-head projections of a shared activation written as a broadcasting batched matmul,
``torch.matmul(x.unsqueeze(1), W)`` with x [B, T, D] and per-head weights W [H, D, E] (the batch dimensions
[B, 1] and [H] broadcast to [B, H]), where one matrix product over the heads' concatenated weights serves
(``torch.einsum("btd,hde->bhte", x, W)``: x viewed as [B T, D], W as [D, H E], one GEMM, the result a permuted
view). torch.matmul broadcasts by expanding both operands to the common batch shape and reshaping them for
bmm: the reshape of an expanded tensor copies it, so x is materialised H times and W B times before the batched
product reads the copies back. Sources: the torch.matmul documentation (broadcast batch dimensions; "the
non-matrix dimensions are broadcasted"), PyTorch's _matmul_impl (aten/src/ATen/native/LinearAlgebra.cpp: the
expand(...).reshape(...) of both operands in the batched case), PyTorch issues on broadcast matmul's memory
(e.g. "torch.matmul uses excessive memory with broadcasting", the expanded copies), the PyTorch performance
tuning guide (avoid needless copies; let one large GEMM do the work).

Stage ``step`` (one ``kprof.range`` per step, inference): eight per-head projections (four weight tensors of
[8, 512, 64] bf16, each applied to two of four [64, 512, 512] bf16 activations in turn: the Q, K, V, O-style
projections of one layer) producing [64, 8, 512, 64]; two values of each kept. Bad: torch.matmul with the
broadcast (x copied to [64, 8, 512, 512], 268 MB, and W to [64, 8, 512, 64], 34 MB, a projection). Good:
torch.einsum (one [32768, 512] x [512, 512] GEMM a projection). The same products (the same FLOPs; the
accumulation order may differ in the last bits).

Model (the needed work): FLOPs 2 x 32768 x 512 x 512 a projection, 1.4e11 a step; bytes x read and the output
written (bf16: 2 x 33.5 MB) and W read a projection: ~5.4e8 a step.

Per design (H100/H200): the good step ~0.25-0.4 ms (eight bf16 GEMMs of 1.7e10 FLOPs at ~500-700 TFLOP/s and
their 67 MB of I/O: GPU-bound); the bad adds two copy kernels a projection (~300 MB written, ~70 MB read) and a
batched product that reads the 300 MB of copies back: ~0.15-0.2 ms a projection, ~1.2-1.6 ms a step: ~4-6x.
The extra time is bytes moved through DRAM beyond what the result needs (cause "over_fetch", resource "dram").

    python broadcast_matmul.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

B, T, D, H, E, NW, NX = 64, 512, 512, 8, 64, 4, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (two values a projection), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, t, d, h, e = (B, T, D, H, E) if cuda else (3, 16, 32, 4, 8)
    g = torch.Generator(device=dev).manual_seed(0)
    xs = [torch.randn(b, t, d, generator=g, device=dev).to(dt) for _ in range(NX)]
    ws = [(torch.randn(h, d, e, generator=g, device=dev) / d**0.5).to(dt) for _ in range(NW)]
    kept: list = []
    it = [0]

    if variant == "bad":

        def proj(x, w):
            return torch.matmul(
                x.unsqueeze(1), w
            )  # [b, 1, t, d] @ [h, d, e]: both expanded to [b, h] and copied

    else:

        def proj(x, w):
            return torch.einsum("btd,hde->bhte", x, w)  # one GEMM [b t, d] @ [d, h e]

    def step():
        out = []
        for j in range(2 * NW):
            y = proj(xs[(it[0] + j) % NX], ws[j % NW])
            out.append(y[0, 0, 0, :2])
        it[0] += 1
        return torch.cat(out)

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(step())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
