"""The global gradient norm (for clipping or the training log) computed over one concatenated fp32 copy of every
gradient (``torch.cat([g.flatten().float() for g in grads]).norm()``: each bf16 gradient copied to fp32, the
copies concatenated into a new buffer, the buffer read for the norm), where a foreach norm over the gradients in
place (``torch._foreach_norm(grads, 2, dtype=torch.float32)``, what ``torch.nn.utils.clip_grad_norm_`` and
``get_total_norm`` use) and the norm of the per-tensor norms give the same value from one read of each gradient.
Sources: the PyTorch documentation of torch.nn.utils.clip_grad_norm_ / get_total_norm ("The norm is computed
over the norms of the individual gradients of all parameters, as if the norms of the individual gradients were
concatenated into a single vector"; the foreach implementation); the PyTorch Performance Tuning Guide; the CUDA
C++ Best Practices Guide ("Memory Optimizations": minimise the data moved through device memory).

Stage ``step`` (one ``kprof.range`` per step, the norm only): the bf16 gradients of a model of 8 transformer
layers at width 2048 (qkv [6144, 2048], out [2048, 2048], up [8192, 2048], down [2048, 8192] and two norm scales
a layer) and a [32000, 2048] embedding: 49 tensors, 4.7e8 elements (0.94 GB); the norm kept. Bad: the
concatenated fp32 copy. Good: ``torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads, 2,
dtype=torch.float32)))``. The same norm up to fp32 summation order.

Model (the needed work): FLOPs 2 an element: 9.4e8; bytes each gradient read once: 9.4e8.

Per design (H100/H200): the good step ~0.3-0.4 ms (0.94 GB read by the multi-tensor norm kernels); the bad step
moves ~8.5 GB (the bf16 gradients read and written as fp32 copies, 1.9 GB, the copies read and concatenated into a
1.9 GB buffer, the buffer read for the norm): ~2.3-2.8 ms, ~6-8x. The extra time is the bytes of the copies moved
through DRAM (cause "over_fetch", resource "dram").

    python grad_norm_concat.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

D, LAYERS, VOCAB = 2048, 8, 32000


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (the norm of each step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    d, nl, vocab = (D, LAYERS, VOCAB) if cuda else (16, 2, 50)
    dt = torch.bfloat16 if cuda else torch.float32
    shapes = [(vocab, d)]
    for _ in range(nl):
        shapes += [(3 * d, d), (d, d), (4 * d, d), (d, 4 * d), (d,), (d,)]
    g = torch.Generator(device=dev).manual_seed(0)
    sets = [[(torch.randn(s, generator=g, device=dev) * 1e-3).to(dt) for s in shapes] for _ in range(2)]
    kept: list = []
    it = [0]

    def step():
        grads = sets[it[0] % 2]
        it[0] += 1
        if variant == "bad":
            norm = torch.cat([g.flatten().float() for g in grads]).norm()
        else:
            norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads, 2, dtype=torch.float32)))
        return norm.reshape(1)

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(step())

    return loop, (lambda: torch.cat(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
