"""Eager PyTorch chains of memory-bound kernels, each marked with kprof.range: what issue 26's
"fuse" cause is about. ``chain`` is bias + GELU + scale + residual (4 elementwise kernels, each
reading and writing the whole tensor); ``rmsnorm`` is an eager RMSNorm (pow, mean, add, rsqrt, mul,
mul: several kernels). Fused, each would read its inputs once and write its output once.

    python examples/eager_chain/chain.py --steps 5
    kprof run --mode annotation --model chain:bytes=4.03e8 --model rmsnorm:bytes=2.68e8 -- \\
        python examples/eager_chain/chain.py --steps 3

The byte models (fp32, the defaults): chain reads x and the residual and writes y, 3 x 4 x 2^25 =
4.03e8 bytes (the bias is 16 KB); rmsnorm reads x and writes y, 2 x 4 x 2^25 = 2.68e8 bytes.
"""

from __future__ import annotations

import argparse

import torch

import kprof


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--cols", type=int, default=4096)
    a = ap.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(a.rows, a.cols, device=dev, generator=g)
    res = torch.randn(a.rows, a.cols, device=dev, generator=g)
    bias = torch.randn(a.cols, device=dev, generator=g)
    w = torch.ones(a.cols, device=dev)
    for _ in range(a.steps):
        with kprof.range("chain"):
            y = torch.nn.functional.gelu(x + bias) * 0.5 + res
        with kprof.range("rmsnorm"):
            z = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    if dev == "cuda":
        torch.cuda.synchronize()
    print("done", float(y[0, 0]), float(z[0, 0]))


if __name__ == "__main__":
    main()
