"""Activations carried through a model as a torch.Tensor subclass that propagates metadata (the pattern of
MONAI's MetaTensor, of unit- or provenance-tagged tensors): the subclass defines ``__torch_function__``, so
every torch operation on it — each linear, layer norm, activation, addition, even ``.mean()`` — first runs
Python: the override is looked up, the arguments scanned for the metadata, the call re-dispatched with the
subclass disabled and the results converted back to the subclass and tagged. The GPU work is unchanged; the
host's time between launches grows by that Python at every operation. Nothing fails; the values are the same.
The fix: plain tensors in the hot loop (unwrap once, ``x.as_subclass(torch.Tensor)``, re-wrap the output; in
MONAI ``set_track_meta(False)``). Sources: the PyTorch documentation "Extending PyTorch" (subclassing
torch.Tensor: ``__torch_function__`` is called for every torch function and method, a Python call on each
operation), MONAI's documentation (``monai.data.set_track_meta``: "when False ... returns torch.Tensor", used
to speed up training), and the PyTorch performance tuning guide (host overhead: keep Python out of the per-
operation path).

Stage ``step`` (one ``kprof.range`` per step): inference (torch.inference_mode) on h [256, 512] fp32 through 12
residual blocks (layer norm, linear 512 x 512, GELU, linear 512 x 512, scaled residual add), the step's output
mean kept: 6 operations a block, 73 GPU kernels a step. Bad: h wrapped as ``MetaTensor`` (a subclass whose
``__torch_function__`` calls the base implementation and copies the input's ``meta`` dict onto each tensor
result). Good: the same code on plain tensors (the metadata attached to the output once).

Per design (H100 SXM): the GPU work ~4-6 µs a kernel (a 134-MFLOP GEMM, small elementwise kernels), the host
~5-8 µs a launch: good ~0.4-0.6 ms a step (the launches); bad adds ~8-15 µs of Python to each of 73
operations (~11 µs measured on this repository's CPU), ~1.0-1.6 ms a step: ~2-3x. The extra time is CPU work between launches (cause "host"), resource
None.

    python subclass_meta.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

ROWS, DIM, BLOCKS = 256, 512, 12


class MetaTensor(torch.Tensor):
    """A tensor carrying a ``meta`` dict through every operation (each result tagged with its input's)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        ret = super().__torch_function__(func, types, args, kwargs)
        meta = next((a.meta for a in args if isinstance(a, MetaTensor) and hasattr(a, "meta")), None)
        if meta is not None:
            for r in ret if isinstance(ret, (tuple, list)) else (ret,):
                if isinstance(r, MetaTensor):
                    r.meta = dict(meta)
        return ret


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's output mean), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    r, d = (ROWS, DIM) if cuda else (8, 32)
    g = torch.Generator().manual_seed(0)
    layers = [
        (
            (torch.randn(d, d, generator=g) / d**0.5).to(dev),
            (torch.randn(d, d, generator=g) / d**0.5).to(dev),
            (1.0 + 0.1 * torch.randn(d, generator=g)).to(dev),
        )
        for _ in range(BLOCKS)
    ]
    x0 = torch.randn(r, d, generator=g).to(dev)
    meta = {"source": "calib", "spacing": (1.0, 1.0), "affine": [[1.0, 0.0], [0.0, 1.0]]}
    kept: list = []

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    if variant == "bad":
                        h = x0.as_subclass(MetaTensor)  # the planted wrapper, carried through every op
                        h.meta = dict(meta)
                    else:
                        h = x0
                    for w1, w2, gam in layers:
                        z = F.layer_norm(h, (d,), weight=gam)
                        z = F.gelu(z @ w1)
                        h = h + 0.5 * (z @ w2)
                    out = h.mean()
                    if variant == "bad":
                        out = out.as_subclass(torch.Tensor)
                    kept.append(out)

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
