"""AdamW run with its default multi-tensor implementation (``foreach``: a chain of ~10 ``torch._foreach_*``
kernels a step, each a full pass over the parameters, the gradients or the moment buffers, reading and writing
them through DRAM) where the fused implementation (``fused=True``: one kernel a chunk, each element's
parameter, gradient and moments read once and written once) serves. Sources: the torch.optim.AdamW
documentation (``foreach`` is the default on CUDA; ``fused`` "is typically faster" and is not the default);
PyTorch's torch/optim/adamw.py (_multi_tensor_adamw: _foreach_mul_ for the decay, _foreach_lerp_,
_foreach_mul_ and _foreach_addcmul_ for the moments, _foreach_sqrt, _foreach_div_, _foreach_add_ and
_foreach_addcdiv_ for the update) and aten/src/ATen/native/cuda/fused_adamw_impl.cu; I. Loshchilov and F.
Hutter, "Decoupled Weight Decay Regularization" (ICLR 2019); the PyTorch performance tuning guide ("Fuse
operations").

Stage ``step`` (one ``kprof.range`` per step): one AdamW step (lr 1e-3, weight decay 0.01) over 8 fp32
parameters of [2048, 2048] (33.5 M elements, 134 MB each for the parameters, gradients and two moments),
the gradients set once (the step alone is timed); two parameter values kept a step. Bad: AdamW(foreach=True):
~20 buffer passes a step (decay 2, lerp 3, mul 2, addcmul 3, sqrt 2, div 2, add 2, addcdiv 4). Good:
AdamW(fused=True): 7 (parameters, gradients, both moments read; parameters, both moments written). The same
update to fp32 rounding.

Model (the needed work): FLOPs ~16 an element, 5.4e8 a step; bytes 7 x 4 bytes an element: 9.4e8 a step.

Per design (H100/H200): the good step ~0.2-0.25 ms (0.94 GB at ~4 TB/s, GPU-bound); the bad ~0.6-0.7 ms (2.7
GB in ~10 foreach kernels): ~2.6-3x. The extra time is the chain's intermediate passes through DRAM, one
kernel a sub-expression where one kernel would keep each element's values in registers (cause "fusion";
resource "dram").

    python adamw_foreach_chain.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

NP, R, C = 8, 2048, 2048


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (two values a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    r, c = (R, C) if cuda else (16, 24)
    g = torch.Generator(device=dev).manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(r, c, generator=g, device=dev) * 0.02) for _ in range(NP)]
    for p in params:
        p.grad = torch.randn(r, c, generator=g, device=dev) * 1e-3
    if variant == "bad":
        opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, foreach=True)  # the default on CUDA
    else:
        opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, fused=True)
    kept: list = []

    def step():
        opt.step()
        return torch.stack([params[0][0, 0], params[-1][-1, -1]]).detach()

    def loop(steps: int) -> None:
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
