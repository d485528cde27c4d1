"""A Triton kernel defined inside the function that launches it (a kernel "factory" called at every forward, the
@triton.jit decorator inside the wrapper): every call makes a new JITFunction, whose in-memory kernel cache starts
empty, so every step rebuilds the launch binder, re-hashes the kernel's source and dependencies, finds the
compiled binary in Triton's on-disk cache, reads it back and loads it into the CUDA context (a new module) before
the step's one real launch. The kernel and its outputs are the same either way. The fix: the kernel defined once
at module level (or the factory memoised with functools.cache), compiled and loaded once. Sources: the Triton
documentation of triton.jit (kernels are JIT-compiled at their first launch and cached, keyed per JITFunction and
its specialisation), Triton's cache (TRITON_CACHE_DIR: compiled kernels kept on disk and loaded from there by a
new JITFunction); the PyTorch performance tuning guide (one-off costs kept out of the loop).

Stage ``step`` (one ``kprof.range`` per step): x [4096, 4096] bf16; h = RMSNorm(x) by a Triton kernel (one
program a row); then y = gelu(h W1) W2 (W1, W2 [4096, 4096] bf16, cuBLAS); y's mean kept. Bad: the RMSNorm's
@triton.jit inside the function called every step. Good: the same kernel defined once at module level.

Per design (H100/H200): the good step ~0.4-0.5 ms, GPU-bound (275 GFLOP on the tensor cores plus the RMSNorm's
64 MB); the bad step adds the per-call JIT work on the host (a JITFunction built, its source hashed, the disk
cache read, a module loaded: ~1.5-3 ms, timed at ~2.4 ms without the module load on a slow 2-core host) while
the GPU, its work done, idles: ~3-7x. The extra time is a one-off cost (compilation-cache lookup and module
load) paid at every step (cause "first_call"), resource None.

    python jit_per_call.py --variant bad --steps 20
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

ROWS, D = 4096, 4096


@triton.jit
def _rmsnorm_once(x_ptr, w_ptr, y_ptr, D, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=m, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    r = tl.rsqrt(tl.sum(x * x, axis=0) / D + eps)
    tl.store(y_ptr + row * D + cols, (x * r * w).to(y_ptr.dtype.element_ty), mask=m)


def rmsnorm_good(x, w, y):
    n, d = x.shape
    _rmsnorm_once[(n,)](x, w, y, d, 1e-6, BLOCK=triton.next_power_of_2(d), num_warps=8)


def rmsnorm_bad(x, w, y):
    # The planted form: the kernel defined where it is launched, a new JITFunction at every call.
    @triton.jit
    def _rmsnorm(x_ptr, w_ptr, y_ptr, D, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        m = cols < D
        x = tl.load(x_ptr + row * D + cols, mask=m, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
        r = tl.rsqrt(tl.sum(x * x, axis=0) / D + eps)
        tl.store(y_ptr + row * D + cols, (x * r * w).to(y_ptr.dtype.element_ty), mask=m)

    n, d = x.shape
    _rmsnorm[(n,)](x, w, y, d, 1e-6, BLOCK=triton.next_power_of_2(d), num_warps=8)


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's mean of y), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    rows, d = (ROWS, D) if cuda else (8, 32)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(rows, d, generator=g).to(dev, dt)
    w = (1.0 + 0.1 * torch.randn(d, generator=g)).to(dev, dt)
    w1 = (torch.randn(d, d, generator=g) / d**0.5).to(dev, dt)
    w2 = (torch.randn(d, d, generator=g) / d**0.5).to(dev, dt)
    h = torch.empty_like(x)
    norm = rmsnorm_bad if variant == "bad" else rmsnorm_good
    kept: list = []

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                norm(x, w, h)
                y = torch.nn.functional.gelu(h @ w1) @ w2
                kept.append(y.float().mean())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
