"""A rollback copy of the model taken with copy.deepcopy before every optimizer step ("keep the last good
weights in case the loss blows up"): deepcopy walks the module tree in Python (every module's __dict__, hooks,
buffers and parameters copied object by object) and allocates a new device copy of every tensor, every step. The
weights it copies are the same either way. The fix: one copy made once, refreshed in place each step by
torch._foreach_copy_ (one batched device copy). Sources: the Python documentation of copy.deepcopy (a recursive
walk with a memo of every object), the PyTorch documentation of Module.load_state_dict / Tensor.copy_ (in-place
copies into existing tensors) and the PyTorch performance tuning guide (host overhead between launches).

Stage ``step`` (one ``kprof.range`` per step): a training step of an MLP of 8 blocks (linear 512 x 512, layer
norm, GELU: 24 modules, 24 parameters) on a batch [128, 512] fp32, MSE loss, SGD with momentum. Bad: ``snap =
copy.deepcopy(model)`` before the optimizer step. Good: ``torch._foreach_copy_(snap_params, params)`` into a
copy made once.

Per design (H100 SXM): the good step ~1-1.5 ms (launch-bound: ~150 small kernels); deepcopy of 33 modules ~2-4 ms
of Python on the host (its 24 device copies small): bad ~3-5 ms: ~2.5-3.5x. The extra time is CPU work between
launches (cause "host"), resource None.

    python deepcopy_snapshot.py --variant bad --steps 20
"""

from __future__ import annotations

import copy

import torch
from _common import parser, run
from torch import nn

import kprof

ROWS, DIM, BLOCKS = 128, 512, 8


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss and the snapshot's weight sum), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    r, d = (ROWS, DIM) if cuda else (8, 32)
    torch.manual_seed(0)
    layers = []
    for _ in range(BLOCKS):
        layers += [nn.Linear(d, d), nn.LayerNorm(d), nn.GELU()]
    model = nn.Sequential(*layers).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(r, d, generator=g).to(dev)
    y = torch.randn(r, d, generator=g).to(dev)
    params = list(model.parameters())
    kept_snap = copy.deepcopy(model)
    snap_params = list(kept_snap.parameters())
    kept: list = []
    last = [kept_snap]

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if variant == "bad":
                    last[0] = copy.deepcopy(model)
                else:
                    with torch.no_grad():
                        torch._foreach_copy_(snap_params, params)
                opt.step()
                kept.append(loss.detach())

    def output():
        w = torch.stack([p.detach().double().sum() for p in last[0].parameters()])
        return torch.cat([torch.stack(kept).double(), w]).cpu()

    return loop, output


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
