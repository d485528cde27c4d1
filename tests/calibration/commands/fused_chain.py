"""bias + GELU + scale + residual on a 8192 x 4096 fp32 tensor:
eager PyTorch runs it as four memory-bound kernels, each reading and writing the whole tensor; the
fix is one Triton kernel that reads x and the residual once and writes y once.
Byte model of the fused form: 3 x 4 x 8192 x 4096 = 4.03e8 bytes (the bias is 16 KB).

    python fused_chain.py --variant bad --steps 20
"""

from __future__ import annotations

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from _common import parser, run  # noqa: E402

import kprof  # noqa: E402


@triton.jit
def _fused(x_ptr, bias_ptr, res_ptr, y_ptr, n_cols, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(bias_ptr + offs % n_cols, mask=mask)
    r = tl.load(res_ptr + offs, mask=mask)
    h = x + b
    g = 0.5 * h * (1.0 + tl.math.erf(h * 0.7071067811865476))
    tl.store(y_ptr + offs, g * 0.5 + r, mask=mask)


def chain(x, bias, res, variant: str):
    if variant == "bad":
        return torch.nn.functional.gelu(x + bias) * 0.5 + res
    y = torch.empty_like(x)
    n = x.numel()
    _fused[(triton.cdiv(n, 1024),)](x, bias, res, y, x.shape[1], n, BLOCK=1024)
    return y


def main() -> None:
    a = parser(__doc__).parse_args()
    cuda = torch.cuda.is_available()
    dev = "cuda" if cuda else "cpu"
    rows, cols = (8192, 4096) if cuda else (16, 64)
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(rows, cols, device=dev, generator=g)
    res = torch.randn(rows, cols, device=dev, generator=g)
    bias = torch.randn(cols, device=dev, generator=g)

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("chain"):
                chain(x, bias, res, a.variant)

    run(torch, loop, a.steps, a.time, a.rounds)


if __name__ == "__main__":
    main()
