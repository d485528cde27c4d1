"""A training loop left running under ``torch.autograd.set_detect_anomaly(True)`` after a NaN hunt. Anomaly
detection is a debugging aid (PyTorch's autograd notes: "this mode should be enabled only for debugging as the
different tests will slow down your program execution"): every op of the forward records the Python stack
that created its autograd node (the traceback formatted on the host), and the engine checks every backward
node's outputs for NaN with a read of the result on the host (a device-to-host copy and a wait for the stream
per node). Nothing fails and the values are right. The fix is one change: anomaly detection off.

Stage ``step`` (one ``kprof.range`` per step): 4096 tokens through 16 residual blocks (LayerNorm, Linear 1024
→ 1024, GELU, Linear 1024 → 1024, residual add) in bf16, loss = mean of the squared output, backward, and a
foreach SGD update. The model: the GEMMs forward and backward, 3·16·2·2·T·1024·1024 = 8.25e11 FLOPs (tensor
cores, bf16); the bytes: the weights read forward and backward, their gradients written and read by the
update and the weights rewritten (~0.34 GB), and the activations (8 MB each: each block writes five in the
forward and reads them back, the backward reads and writes about twice as many), ~3.3 GB: 3.6e9.

Per design (H100 SXM): good ~2 ms per step (the GPU's ~250 kernels, ahead of the host); bad: ~80 forward
nodes each formatting a stack on the host (tens of µs each) and ~80 backward nodes each waited for: the host
sets the pace, the GPU idles between the nodes, ~3-4x (cause "host"; the per-node waits the other reading,
"sync").

Measured (H100, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 18.9 ms (per step 842 GPU
ops against 202: each backward node's NaN check adds a reduce kernel, a memset, a 1-byte DtoH copy and a
cudaStreamSynchronize, 160 of each), good 5.9 ms: +220 %. The kept losses are identical.

    python anomaly_mode.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

TOKENS, WIDTH, BLOCKS = 4096, 1024, 16


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
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
        # The planted switch: anomaly detection on around the loop, as one leaves it after a NaN hunt.
        with torch.autograd.set_detect_anomaly(variant == "bad"):
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


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
