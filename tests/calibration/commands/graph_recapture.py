"""A decode-style loop that uses a CUDA graph to cut its launch overhead but captures and instantiates
the graph again at every step (the capture inside the loop, as when the graph is built where it is
replayed), so every step pays the capture (each kernel launched into the capture from Python), the
instantiation (cudaGraphInstantiate over ~100 nodes) and the graph's destruction, instead of one
cudaGraphLaunch (CUDA C++ Best Practices Guide / CUDA programming guide, "CUDA Graphs": define and
instantiate once, launch many times; the cost is in the CUDA API calls). Nothing fails and the values are
identical. The fix is that one change: the graph captured once before the loop and replayed each step.

Stage ``step`` (one ``kprof.range`` per step): 16 residual blocks (LayerNorm, a 1024 x 1024 linear, GELU,
a 1024 x 1024 linear, the residual add; bf16) over a batch of 8 tokens, run as one graph: ~6 kernels per
block, ~100 kernels of a few µs each; the step's input copied into the graph's static input first, the
token means kept. The model: the GEMMs 2·2·B·D·D per block (16 blocks: 5.4e8 FLOPs, tensor cores, bf16);
the bytes: the weights read once (16 x 2 x 2 MB = 6.7e7) plus the activations (small).

The capture uses the CUDAGraph object's capture_begin/capture_end on one side stream, every capture in one
memory pool (torch.cuda.graph's context manager would also synchronise and empty the allocator's cache
on entry, and a pool per graph would free its memory with each graph: other causes).

Per design (H100 SXM): good ~0.3 ms per step (the GPU's ~100 small kernels, one graph launch); bad
~100 launches into the capture (~0.5 ms of host time) + instantiation (~0.3-1 ms) + destruction,
the GPU idle meanwhile: ~3-5x.

Measured (H100, torch 2.11, 2026-11-26, wall time per step as record.py times it): bad 1401 µs, good 330 µs:
+324 %; the GPU's work the same (nsys kernel totals 295 and 291 µs a step). The kept outputs are identical.

    python graph_recapture.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, WIDTH, BLOCKS, INPUTS = 8, 1024, 16, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's token means), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, d = (BATCH, WIDTH) if cuda else (2, 16)
    g = torch.Generator().manual_seed(0)
    ws = [
        (
            (torch.randn(d, d, generator=g) / d**0.5).to(dev, dt),
            (torch.randn(d, d, generator=g) / d**0.5).to(dev, dt),
        )
        for _ in range(BLOCKS)
    ]
    inputs = [torch.randn(b, d, generator=g).to(dev, dt) for _ in range(INPUTS)]
    static_in = torch.zeros(b, d, device=dev, dtype=dt)
    kept: list = []
    state = {"i": 0, "graph": None, "out": None}

    def forward(h):
        for w1, w2 in ws:
            h = h + F.linear(F.gelu(F.linear(F.layer_norm(h, (d,)), w1)), w2)
        return h

    side = torch.cuda.Stream() if cuda else None
    # one memory pool for every capture, kept alive by the graph in use (a pool whose last graph is gone
    # is released and cannot be captured into again)
    pool = torch.cuda.graph_pool_handle() if cuda else None

    def capture():
        if not cuda:  # no graphs on the CPU: replay() runs the same computation directly
            return None, None
        graph = torch.cuda.CUDAGraph()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            graph.capture_begin(pool=pool)
            out = forward(static_in)
            graph.capture_end()
        torch.cuda.current_stream().wait_stream(side)
        return graph, out

    def replay(graph, out):
        if graph is not None:
            graph.replay()
            return out
        return forward(static_in)

    if cuda:  # warm-up outside any capture (cuBLAS handles and workspaces)
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                forward(static_in)
        torch.cuda.current_stream().wait_stream(side)
    if variant == "good":
        state["graph"], state["out"] = capture()

    def loop(steps: int) -> None:
        for _ in range(steps):
            x = inputs[state["i"] % INPUTS]
            state["i"] += 1
            with kprof.range("step"):
                static_in.copy_(x)
                if variant == "bad":
                    # the new graph replaces the last one after its capture (the shared pool stays in use)
                    state["graph"], state["out"] = capture()
                out = replay(state["graph"], state["out"])
                kept.append(out.float().mean(dim=0))

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
