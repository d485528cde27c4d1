"""A Triton kernel autotuned with the token count in its key, in a loop whose token count changes every
step (variable-length batches: packed sequences, dynamic batching in a server, a data loader without
bucketing): ``@triton.autotune(configs, key=["n_rows", "D"])``. The autotuner benchmarks every config
whenever a key's value is new, so each step re-runs the whole tuning (each config launched tens of
times with the L2 flushed between runs, a synchronisation each) before the step's real launch. The
best config depends on the hidden size, not on the row count (one program a row): the fix keys the
autotuner on ``D`` alone, tuned once. Sources: the Triton documentation of triton.autotune ("key: a list
of argument names whose change in value will trigger the evaluation of all provided configs"); vLLM /
SGLang's Triton kernels, which key on bucketed sizes (next power of two) for this reason; PyTorch's
"Performance Tuning Guide" (avoid re-tuning: torch.backends.cudnn.benchmark with variable input sizes
"may lead to worse runtime performance").

Stage ``step`` (one ``kprof.range`` per step): n tokens (n = 4096 + 8·i at the process's i-th step, so
never the same twice), x [n, 4096] bf16 (a view of a preallocated buffer); h = RMSNorm(x) by a Triton
kernel (one program a row, autotuned over num_warps 4, 8, 16; the benchmark shortened by the user:
warm-up 1 ms, repetitions 2 ms); then the MLP y = silu(h W1) W2 (W1 [4096, 16384], W2 [16384, 4096]
bf16, cuBLAS); y's mean kept. Bad: key ["n_rows", "D"]. Good: key ["D"]. The same kernels and outputs
(every config computes the same RMSNorm).

Per design (H100 SXM): the MLP ~1.1-1.5 TFLOP a step, ~2-3 ms; the RMSNorm ~20-30 µs; bad adds the
tuning: 3 configs x ~30 runs of (a 256 MB L2 flush + the kernel) plus their synchronisations, ~8-12 ms
a step; good ~2-3 ms: ~4-5x. The extra time is autotuning repeated every step (cause "first_call":
autotune costs that should be paid once; the GPU is mostly busy with the tuning's flushes and trial
launches, so no pipe or memory level is the point: resource None).

    python autotune_every_step.py --variant bad --steps 20
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

N0, DN, D, HIDDEN, MAX_STEPS = 4096, 8, 4096, 16384, 400
CONFIGS = [triton.Config({}, num_warps=w) for w in (4, 8, 16)]


def _bench(fn, quantiles=None):
    """The user's shortened benchmark (triton.testing.do_bench with 1 ms of warm-up, 2 ms of runs)."""
    return triton.testing.do_bench(fn, warmup=1, rep=2, quantiles=quantiles)


@triton.jit
def _rmsnorm(x_ptr, w_ptr, y_ptr, n_rows, D, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=m, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    r = tl.rsqrt(tl.sum(x * x, axis=0) / D + eps)
    tl.store(y_ptr + row * D + cols, (x * r * w).to(y_ptr.dtype.element_ty), mask=m)


# The planted form: the row count in the key (a new tuning for every new n); the fix: the width alone.
_by_rows = triton.autotune(CONFIGS, key=["n_rows", "D"], do_bench=_bench)(_rmsnorm)
_by_width = triton.autotune(CONFIGS, key=["D"], do_bench=_bench)(_rmsnorm)


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's mean of y), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    n0, dn, d, hidden = (N0, DN, D, HIDDEN) if cuda else (8, 1, 32, 64)
    g = torch.Generator().manual_seed(0)
    xbuf = torch.randn(n0 + dn * MAX_STEPS, d, generator=g).to(dev, dt)
    w = (1.0 + 0.1 * torch.randn(d, generator=g)).to(dev, dt)
    w1 = (torch.randn(d, hidden, generator=g) / d**0.5).to(dev, dt)
    w2 = (torch.randn(hidden, d, generator=g) / hidden**0.5).to(dev, dt)
    ybuf = torch.empty_like(xbuf)
    kernel = _by_rows if variant == "bad" else _by_width
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            n = n0 + dn * (state["i"] % MAX_STEPS)  # a new token count every step
            state["i"] += 1
            with kprof.range("step"):
                x, h = xbuf[:n], ybuf[:n]
                if cuda:
                    kernel[(n,)](x, w, h, n, d, 1e-6, BLOCK=triton.next_power_of_2(d))
                else:  # the interpreter has no benchmark: one config, the variants alike
                    _rmsnorm[(n,)](x, w, h, n, d, 1e-6, BLOCK=triton.next_power_of_2(d), num_warps=4)
                y = torch.nn.functional.silu(h @ w1) @ w2
                kept.append(y.float().mean())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
