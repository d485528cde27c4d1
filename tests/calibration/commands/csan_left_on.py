"""An inference loop run with PyTorch's CUDA Stream Sanitizer (CSAN) left enabled: ``TORCH_CUDA_SANITIZER=1``
kept in a service's launch environment after a stream race was debugged (``import torch`` then enables
``torch.cuda._sanitizer``), so every operator goes through the sanitizer's dispatch mode, which parses the
operator's schema and arguments, records each tensor's reads and writes per stream and captures a Python stack
trace for every kernel launch and every allocation, on the host thread, before the next launch. The GPU's work
is the same. Sources: the PyTorch documentation "CUDA Stream Sanitizer" ("a prototype tool for detecting
synchronization errors between streams"; enabled by ``TORCH_CUDA_SANITIZER=1`` or
``torch.cuda._sanitizer.enable_cuda_sanitizer()``, meant for debugging); the PyTorch performance tuning guide
(keep debugging APIs off in production runs).

Stage ``step`` (one ``kprof.range`` per step): a 12-block residual MLP (each block LayerNorm, Linear 1024 ->
1024, GELU, the residual add) on x [4096, 1024] bf16 under ``torch.inference_mode()``: ~50 kernels a step; the
output kept. Bad: the loop's operators run under the sanitizer's dispatch mode (the mode that
``TORCH_CUDA_SANITIZER=1`` enters at import; here entered around the loop, so the good variant of the quick
check's same process is not sanitised). Good: the same loop without it. On the CPU (the check) the sanitizer
is not entered (it tracks CUDA streams only).

Model (the needed work): FLOPs 12 x 2 x 4096 x 1024^2 = 1.03e11 (bf16, tensor cores); bytes: each block's
activations read and written a few times (4096 x 1024 x 2 B = 8 MiB) and its weights (2 MiB): ~4e8.

Per design (H100/H200): the good step ~0.4-0.6 ms (GPU-bound: 12 GEMMs of ~15 us and ~36 small memory-bound
kernels); the bad step ~3-8 ms (~50-150 us of Python in the sanitizer for each of ~50 operators and their
allocations): ~5-10x. The extra time is CPU work between launches with the GPU idle (cause "host", resource
None).

    python csan_left_on.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, DIM, BLOCKS = 4096, 1024, 12


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's output), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, d, nb = (BATCH, DIM, BLOCKS) if cuda else (8, 16, 3)
    g = torch.Generator().manual_seed(0)
    ws = [(torch.randn(d, d, generator=g) / d**0.5).to(dev, dt) for _ in range(nb)]
    bs = [(0.1 * torch.randn(d, generator=g)).to(dev, dt) for _ in range(nb)]
    lw = [(1.0 + 0.1 * torch.randn(d, generator=g)).to(dev, dt) for _ in range(nb)]
    lb = [(0.1 * torch.randn(d, generator=g)).to(dev, dt) for _ in range(nb)]
    xs = torch.randn(8, b, d, generator=g).to(dev, dt)  # eight inputs, one a step in turn
    kept: list = []
    it = [0]
    mode = None
    if variant == "bad" and cuda:
        from torch.cuda._sanitizer import CUDASanitizerDispatchMode

        mode = CUDASanitizerDispatchMode()

    def step():
        x = xs[it[0] % 8]
        it[0] += 1
        for k in range(nb):
            h = F.layer_norm(x, (d,), lw[k], lb[k])
            x = x + F.gelu(F.linear(h, ws[k], bs[k]))
        return x

    def loop(steps: int) -> None:
        with torch.inference_mode():
            if mode is not None:
                mode.__enter__()
            try:
                for _ in range(steps):
                    with kprof.range("step"):
                        kept.append(step())
                    if len(kept) > 2:
                        kept.pop(0)  # the last outputs only
            finally:
                if mode is not None:
                    mode.__exit__(None, None, None)

    return loop, (lambda: kept[-1].double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
