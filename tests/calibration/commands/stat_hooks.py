"""Forward hooks left on every module from a debugging session, each computing its output's statistics (mean,
standard deviation, largest magnitude) at every step: three reductions and a stack a module, small kernels that
each cost a launch, so a step of ~50 kernels becomes one of ~200, all launched from the host. Nothing fails; the
outputs are the same (the statistics are kept on the GPU, never read). The fix: the hooks removed (their handles'
remove()) outside debugging. Sources: the PyTorch documentation of Module.register_forward_hook (a hook runs at
every forward call until its handle is removed), the PyTorch performance tuning guide (many small kernels: the
step is bound by launch overhead; fuse or remove them) and the CUDA C++ Best Practices Guide (kernel launch
overhead).

Stage ``step`` (one ``kprof.range`` per step): inference on h [64, 512] fp32 through 8 blocks (layer norm, linear
512 x 512, GELU, linear 512 x 512, residual add): 33 leaf modules. Bad: a forward hook on each leaf module
storing torch.stack([o.mean(), o.std(), o.abs().amax()]) in a list cleared every step. Good: no hooks.

Per design (H100 SXM): the good step ~0.3-0.5 ms (~50 small kernels, launch-bound); the hooks add ~4-5 kernels a
module (~150): ~1.0-1.6 ms: ~3x. The extra time is the launches of many tiny kernels (cause "launch"), resource
None.

    python stat_hooks.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run
from torch import nn

import kprof

ROWS, DIM, BLOCKS = 64, 512, 8


class Block(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, d)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(d, d)

    def forward(self, h):
        return h + self.fc2(self.act(self.fc1(self.norm(h))))


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's output mean), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    r, d = (ROWS, DIM) if cuda else (8, 32)
    torch.manual_seed(0)
    model = nn.Sequential(*[Block(d) for _ in range(BLOCKS)], nn.LayerNorm(d)).to(dev)
    x0 = torch.randn(r, d, generator=torch.Generator().manual_seed(1)).to(dev)
    stats: list = []
    if variant == "bad":

        def hook(mod, inp, out):
            stats.append(torch.stack([out.mean(), out.std(), out.abs().amax()]))

        for m in model.modules():
            if not list(m.children()):
                m.register_forward_hook(hook)
    kept: list = []

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    stats.clear()
                    kept.append(model(x0).mean())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
