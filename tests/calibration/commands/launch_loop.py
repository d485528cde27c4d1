"""A step made of 100 tiny elementwise operations on a small tensor, issued one by one from Python:
each kernel runs for about as long as its launch takes. The fix captures the step once as a CUDA
graph and replays it.

    python launch_loop.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof


def main() -> None:
    a = parser(__doc__).parse_args()
    cuda = torch.cuda.is_available()
    dev = "cuda" if cuda else "cpu"
    x = torch.ones(4096, device=dev)
    out = torch.empty_like(x)

    def body() -> None:
        y = x
        for i in range(50):
            y = y * 1.0001 + 1e-4
        out.copy_(y)

    graph = None
    if a.variant == "good" and cuda:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            body()  # warm up on a side stream before capture, as torch's docs ask
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            body()

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                if graph is not None:
                    graph.replay()
                else:
                    body()

    run(torch, loop, a.steps, a.time, a.rounds)


if __name__ == "__main__":
    main()
