"""A training loop run with ``CUDA_LAUNCH_BLOCKING=1`` left in its environment (set to debug an asynchronous
CUDA error, then forgotten in a launcher script or a notebook's first cell). Every kernel launch then
returns only when the kernel has finished (CUDA C++ Programming Guide, "Asynchronous Concurrent Execution":
"Programmers can globally disable asynchronicity of kernel launches ... by setting the CUDA_LAUNCH_BLOCKING
environment variable to 1. This feature is provided for debugging purposes only and should not be used as a
way to make production software run reliably."; PyTorch's CUDA semantics notes say the same). The host can no
longer run ahead: each of the step's ~200 kernels costs its launch, its run and the wait for its completion in
series, and the GPU idles while the host prepares the next. Nothing fails and the values are right. The fix
is one change: the variable unset (asynchronous launches).

Stage ``step`` (one ``kprof.range`` per step): 8192 tokens through 16 residual blocks (LayerNorm, Linear 1024
→ 1024, GELU, Linear 1024 → 1024, residual add) in bf16, loss = mean of the squared output, backward, and a
foreach SGD update. The model: the GEMMs forward and backward, 3·16·2·2·T·1024·1024 = 1.65e12 FLOPs (tensor
cores, bf16); the bytes: the weights read forward and backward, their gradients written and read by the
update and the weights rewritten (~0.34 GB), and the activations (16 MB each: each block writes five in the
forward and reads them back, the backward reads and writes about twice as many), ~6.6 GB: 6.9e9.

Per design (H100 SXM; revised after the quick check, see below): good ~max(host, GPU) a step, the host's
~200 launches (~6 ms on the GPU machine's host) with ~5 ms of GPU work behind them; bad: host time plus GPU
time plus a launch-to-completion round trip (~5-10 µs) for each of ~200 kernels, the GPU idle between them:
~12 ms: ~1.9x. The waits are implicit synchronisations in the launch calls themselves
(cause "sync"; no pipe or memory level is busy: resource None).

Design revised after the quick check (H200, 2026-11-26 23:08 UTC): at the first design's 2048 tokens the good
step was host-bound (6.2 ms a step for ~1 ms of GPU work) and the bad one only 1.38x slower (8.6 ms): blocking
launches cost little where the GPU has little to overlap. Tokens raised to 8192 so the GPU's work is about the
host's time (the mechanism and the fix unchanged).

    python launch_blocking.py --variant bad --steps 20
"""

from __future__ import annotations

import os

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

TOKENS, WIDTH, BLOCKS = 8192, 1024, 16


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant`` (the launch mode itself is set
    by ``environment`` before CUDA starts)."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    t, d, blocks = (TOKENS, WIDTH, BLOCKS) if cuda else (32, 16, 3)
    g = torch.Generator().manual_seed(0)
    params = []
    for _ in range(blocks):
        w1 = (torch.randn(d, d, generator=g) / d**0.5).to(dev, dt).requires_grad_()
        w2 = (torch.randn(d, d, generator=g) / d**0.5 * 0.5).to(dev, dt).requires_grad_()
        params += [w1, w2]
    xs = [torch.randn(t, d, generator=g).to(dev, dt) for _ in range(4)]
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            x = xs[state["i"] % len(xs)]
            state["i"] += 1
            with kprof.range("step"):
                h = x
                for j in range(blocks):
                    w1, w2 = params[2 * j], params[2 * j + 1]
                    h = h + F.linear(F.gelu(F.linear(F.layer_norm(h, (d,)), w1)), w2)
                loss = h.float().pow(2).mean()
                loss.backward()
                with torch.no_grad():
                    grads = [p.grad for p in params]
                    torch._foreach_add_(params, grads, alpha=-1e-3)
                    for p in params:
                        p.grad = None
                kept.append(loss.detach())

    return loop, (lambda: torch.stack(kept).float().cpu())


def environment(variant: str) -> dict:
    """The planted switch: the variables the process runs with, set before CUDA is initialised."""
    return {"CUDA_LAUNCH_BLOCKING": "1" if variant == "bad" else "0"}


def main() -> None:
    a = parser(__doc__).parse_args()
    os.environ.update(environment(a.variant))  # before the first CUDA call (torch.cuda.is_available)
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
