"""A step that multiplies 256 small matrix pairs one item at a time from Python (per-expert or
per-head code written as a loop: ``[a[i] @ w[i] for i in range(B)]`` then ``torch.stack``): 256
cuBLAS launches of a 64x128 @ 128x64 bf16 product each, every one a few microseconds of GPU work
on one or two of the 132 SMs, so the host's launches, not the GPU, set the step's time. The fix
is one ``torch.bmm`` over the batch: one launch whose blocks fill the GPU (CUDA C++ Best Practices
Guide: batch small work into few large launches; cuBLAS' batched GEMM).

Stage ``matmuls`` (one ``kprof.range`` per step): 2*B*M*K*N = 2*256*64*128*64 = 2.68e8 FLOPs;
bytes: a and w read, the output written once (B*(M*K + K*N + M*N)*2 = 1.05e7 bytes; the bad
variant's stack copies the output once more).

    python per_item_matmul.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

B, M, K, N = 256, 64, 128, 64


def main() -> None:
    a = parser(__doc__).parse_args()
    cuda = torch.cuda.is_available()
    dev, dt = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(B, M, K, device=dev, generator=g).to(dt)
    w = (torch.randn(B, K, N, device=dev, generator=g) / K**0.5).to(dt)
    ref = torch.bmm(x.float(), w.float())
    outs: list = []

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("matmuls"):
                if a.variant == "bad":
                    y = torch.stack([x[i] @ w[i] for i in range(B)])  # B launches, one item each
                else:
                    y = torch.bmm(x, w)  # one batched launch
            outs[:] = [y]

    run(torch, loop, a.steps, a.time, a.rounds)
    err = float((outs[0].float() - ref).norm() / ref.norm())
    assert err < 1e-2, f"per_item_matmul {a.variant}: relative error {err:.3g}"


if __name__ == "__main__":
    main()
