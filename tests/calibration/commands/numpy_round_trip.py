"""A tensor detached and copied by a round trip through NumPy, ``torch.from_numpy(t.detach().cpu().numpy()).to(
device)``, at every step (a pattern from code that moves between frameworks, or "detaches" a target this way),
where ``t.detach().clone()`` (or ``t.detach()`` alone) on the GPU gives the same values: the round trip copies the
tensor to pageable host memory (a device-to-host copy the host waits for, staged by the driver) and back (a
pageable host-to-device copy), and the GPU idles meanwhile. Sources: the PyTorch documentation ("CUDA semantics":
pinned memory buffers, copies from pageable memory are synchronous; Tensor.numpy / torch.from_numpy share host
memory, so a CUDA tensor must be copied to the host first); the PyTorch Performance Tuning Guide ("Avoid
unnecessary CPU-GPU synchronization", "create tensors directly on the target device"); the CUDA C++ Best
Practices Guide ("Data Transfer Between Host and Device": minimize transfers, pageable transfers are staged).

Stage ``step`` (one ``kprof.range`` per step, inference): a teacher MLP 1024 -> 1024 -> 1024 (fp32, GELU) on a
batch x [4096, 1024] fp32 (one of four on the GPU in turn), its output t [4096, 1024] fp32 (16 MiB) copied as a
target and folded into a running average target (``avg.mul_(0.9).add_(copy, alpha=0.1)``, preallocated). Bad:
``copy = torch.from_numpy(t.detach().cpu().numpy()).to(dev)``. Good: ``copy = t.detach().clone()``.

Model (the needed work): FLOPs the MLP, 2 x 4096 x 2 x 1024 x 1024: 1.7e10; bytes x read, the weights (8 MiB),
the hidden activation (pre- and post-GELU) written and read, t written and read, the copy written and read, avg
read and written (16 MiB each): ~1.8e8.

Per design (H100/H200): the good step ~0.35-0.5 ms (two fp32 GEMMs of 8.6 GFLOP on the FMA pipes, ~50 TFLOP/s; the
GELU, the copy and the average ~40 us; 6 kernels, GPU-bound); the bad step adds a 16 MiB pageable device-to-host
copy into freshly allocated host memory and a 16 MiB pageable host-to-device copy, each staged through the
driver's pinned buffers at ~3-20 GB/s (~1-5 ms each) with the GPU idle: ~2-10 ms, ~4-20x. The extra time is the host<->device transfers in the step (cause "copy", resource None).

    python numpy_round_trip.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

B, D, H = 4096, 1024, 1024


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (a few entries of the running average target a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, d, h = (B, D, H) if cuda else (64, 32, 128)
    g = torch.Generator(device=dev).manual_seed(0)
    xs = [torch.randn(b, d, generator=g, device=dev) for _ in range(4)]
    w1 = torch.randn(d, h, generator=g, device=dev) / d**0.5
    w2 = torch.randn(h, d, generator=g, device=dev) / h**0.5
    avg = torch.zeros(b, d, device=dev)
    kept: list = []
    it = [0]

    def step():
        x = xs[it[0] % 4]
        it[0] += 1
        t = torch.nn.functional.gelu(x @ w1) @ w2
        if variant == "bad":
            copy = torch.from_numpy(t.detach().cpu().numpy()).to(dev)
        else:
            copy = t.detach().clone()
        avg.mul_(0.9).add_(copy, alpha=0.1)
        return avg[:2, :4].clone()

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
