"""A denoising (diffusion-style) training loop that draws each step's noise on the CPU and copies it to the GPU:
``noise = torch.randn(x.shape).to(device)`` (and the timesteps the same way), the idiom of many training
scripts written first for the CPU. PyTorch's Performance Tuning Guide ("Create tensors directly on the
target device": "Instead of calling torch.rand(size).cuda() to generate a random tensor, produce the output
directly on the target device: torch.rand(size, device='cuda')"); CUDA C++ Best Practices Guide, "Minimize
data transfer between the host and the device". The CPU's random generator fills 3.1M normal values a step,
the pageable copy waits for the GPU's queue to reach it and stages 12.6 MB through a bounce buffer, and the GPU idles while the host draws: the step is the host's. Nothing fails and the loss behaves
the same (another stream of random numbers). The fix is one change: the noise drawn on the device
(``torch.randn(..., device="cuda", generator=...)``).

Stage ``step`` (one ``kprof.range`` per step): a batch of 16 images 3 x 256 x 256 (bf16, a pool of 4 on the
GPU), noise and 16 timesteps drawn, x_t = sqrt(a_t)·x + sqrt(1 - a_t)·noise, patchified (16 x 16: 4096 tokens
of 768), an MLP denoiser 768 → 4096 → 4096 → 4096 → 768 (GELU) predicting the noise, MSE loss, backward, a
foreach SGD step. The model: the GEMMs forward and backward, 3·2·4096·(2·768·4096 + 2·4096²) = 9.8e11 FLOPs
(tensor cores, bf16); the bytes: the weights read forward and backward, their gradients written and read by
the update, the weights rewritten (~0.3 GB), the activations written forward and read back in the backward
(~0.65 GB), the images and noise (~0.08 GB): ~1.0e9.

Per design (H100 SXM): good ~2-2.5 ms a step (the GEMMs at ~500 TFLOP/s, the host running ahead); bad: the
CPU's normal generator at ~0.15-0.5 G values/s (~6-20 ms for 3.1M) while the GPU has finished the last step,
then a pageable 12.6 MB copy (~1.5-3 ms) before the step's kernels can run: ~8-23 ms: ~3-10x. The GPU waits on
the host (cause "host"; no pipe or memory level is busy: resource None); the pageable copy is the other
reading ("copy"), a minor share by design.

    python host_randn.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, SIDE, PATCH, HIDDEN, LAYERS = 16, 256, 16, 4096, 3


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, side, patch, hidden = (BATCH, SIDE, PATCH, HIDDEN) if cuda else (2, 32, 8, 64)
    g = torch.Generator().manual_seed(0)
    dim = 3 * patch * patch
    sizes = [dim] + [hidden] * LAYERS + [dim]
    params = [
        (torch.randn(o, i, generator=g) / i**0.5).to(dev, dt).requires_grad_()
        for i, o in zip(sizes, sizes[1:])
    ]
    images = [torch.randn(b, 3, side, side, generator=g).to(dev, dt) for _ in range(4)]
    alphas = torch.linspace(0.999, 0.01, 1000).to(dev)
    # The planted switch: where the step's random numbers are drawn.
    host_gen = torch.Generator().manual_seed(1)
    dev_gen = torch.Generator(device=dev).manual_seed(1)
    kept: list = []
    state = {"i": 0}

    def draw(shape, dtype=torch.float32):
        if variant == "bad":
            return torch.randn(shape, generator=host_gen, dtype=dtype).to(dev)
        return torch.randn(shape, generator=dev_gen, dtype=dtype, device=dev)

    def draw_t(n):
        if variant == "bad":
            return torch.randint(0, 1000, (n,), generator=host_gen).to(dev)
        return torch.randint(0, 1000, (n,), generator=dev_gen, device=dev)

    def loop(steps: int) -> None:
        for _ in range(steps):
            x = images[state["i"] % len(images)]
            state["i"] += 1
            with kprof.range("step"):
                noise = draw(x.shape).to(dt)
                a = alphas[draw_t(b)].view(b, 1, 1, 1).to(dt)
                xt = a.sqrt() * x + (1 - a).sqrt() * noise
                n = side // patch
                tok = xt.view(b, 3, n, patch, n, patch).permute(0, 2, 4, 1, 3, 5).reshape(b * n * n, dim)
                h = tok
                for j, w in enumerate(params):
                    h = F.linear(h, w)
                    if j < len(params) - 1:
                        h = F.gelu(h)
                want = noise.view(b, 3, n, patch, n, patch).permute(0, 2, 4, 1, 3, 5).reshape(b * n * n, dim)
                loss = F.mse_loss(h.float(), want.float())
                loss.backward()
                with torch.no_grad():
                    torch._foreach_add_(params, [p.grad for p in params], alpha=-1e-3)
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
