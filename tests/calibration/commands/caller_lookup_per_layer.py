"""A per-layer tracing helper that names its caller with ``inspect.stack()`` (a logging or bookkeeping helper
called at the top of every module's forward: ``caller = inspect.stack()[1].function``), where ``sys._getframe(1)`` (or no
lookup) gives the same name: ``inspect.stack()`` builds a FrameInfo for every frame of the stack, resolving each
frame's source file and reading its context line (os.path checks, linecache), tens of microseconds a frame, on
the host at every call, while the GPU waits for the next launch. Sources: the Python documentation of the inspect
module ("inspect.stack(context=1)": a list of FrameInfo records with code context, "sys._getframe" for the current
frame); the PyTorch Performance Tuning Guide (host overhead between kernel launches); the CUDA C++ Best
Practices Guide ("Asynchronous and Overlapping Transfers with Computation": the GPU idles when the host falls
behind).

Stage ``step`` (one ``kprof.range`` per step, inference): a residual MLP of 12 blocks (nn.Modules in an
nn.Sequential), each x + mlp(x), mlp(x) = gelu(x @ W) (an inner nn.Module), W [2048, 2048] bf16, x [4096, 2048]
bf16 (one of four batches in turn); every module's forward (block and mlp: 24 a step) first calls
``trace_block(name)``, which records (caller, module name) in a Python list. Bad: the caller found with
``inspect.stack()[1].function``. Good: ``sys._getframe(1).f_code.co_name``. The same records and outputs.

Model (the needed work): FLOPs 12 x 2 x 4096 x 2048 x 2048: 4.1e11; bytes per block x read twice, the weights
(8 MiB), the product written and read, x written (16 MiB each): ~12 x 8.4e7 = 1.0e9.

Per design (H100/H200): the good step ~0.7-1.0 ms (twelve bf16 GEMMs of 34 GFLOP at ~500-700 TFLOP/s, the GELU
and residual adds ~20 us a block, ~36 launches and 24 module calls, ~0.4 ms of host time: GPU-bound); the bad step
adds 24 inspect.stack() calls at a stack depth of 11-14 frames (each frame's source file and module resolved,
inspect.getmodule scanning sys.modules for some), ~0.1-0.3 ms each on the host, the GPU idle once the host falls
behind: ~3.5-7 ms, ~4-8x. The extra time is Python work on the host between launches (cause "host", resource
None).

    python caller_lookup_per_layer.py --variant bad --steps 20
"""

from __future__ import annotations

import inspect
import sys

import torch
from _common import parser, run

import kprof

B, D, L = 4096, 2048, 12


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (a few entries of the output a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, d, nl = (B, D, L) if cuda else (32, 64, 4)
    dt = torch.bfloat16 if cuda else torch.float32
    g = torch.Generator(device=dev).manual_seed(0)
    xs = [torch.randn(b, d, generator=g, device=dev).to(dt) for _ in range(4)]
    ws = [(torch.randn(d, d, generator=g, device=dev) / d**0.5).to(dt) for _ in range(nl)]
    records: list = []
    kept: list = []
    it = [0]

    def trace_block(name: str) -> None:
        if variant == "bad":
            caller = inspect.stack()[1].function
        else:
            caller = sys._getframe(1).f_code.co_name
        records.append((caller, name))
        if len(records) > 1000:
            del records[:500]

    class Mlp(torch.nn.Module):
        def __init__(self, w, i):
            super().__init__()
            self.w, self.name = w, f"mlp{i}"

        def forward(self, x):
            trace_block(self.name)
            return torch.nn.functional.gelu(x @ self.w)

    class Block(torch.nn.Module):
        def __init__(self, w, i):
            super().__init__()
            self.mlp, self.name = Mlp(w, i), f"block{i}"

        def forward(self, x):
            trace_block(self.name)
            return x + self.mlp(x)

    model = torch.nn.Sequential(*[Block(w, i) for i, w in enumerate(ws)])

    def step():
        x = xs[it[0] % 4]
        it[0] += 1
        return model(x)[:2, :4].float()

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(step())
        assert records[-1] == ("forward", f"mlp{nl - 1}"), records[-1]

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
