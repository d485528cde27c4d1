"""Inference requests served one at a time: each request's activation vector [1, 4096] is run through a
4-layer MLP (4096 x 4096 fp16 weights, 32 MiB a layer, 128 MiB in all: more than the 50 MiB L2) on its own,
a matrix-vector product a layer, so the whole of the weights streams from DRAM once for every request, where
stacking the step's requests into one [R, 4096] batch runs each layer as one small matrix product that reads
the weights once. The same outputs (each request's rows through the same layers). Sources: the PyTorch
performance tuning guide and the NVIDIA "Matrix Multiplication Background User's Guide" (arithmetic
intensity: a GEMV reads every weight for 2 FLOPs, a batch of R for 2R); Yu et al., "Orca: A Distributed
Serving System for Transformer-Based Generative Models" (OSDI 2022) and Kwon et al. (vLLM, SOSP 2023)
(batching requests because decode steps are bound by reading the weights); the CUDA C++ Best Practices Guide
("Minimize data transfer" between global memory and the SMs).

Stage ``step`` (one ``kprof.range`` per step): R = 8 requests x [1, 4096] fp16 (already on the device), each
through Linear + ReLU x 3 and a last Linear (4096 -> 4096, bias), the outputs kept. Bad: a Python loop over
the requests, 4 GEMVs each (32 matrix-vector products a step, ~40 kernels with the activations). Good: the
requests stacked (``torch.cat``), 4 matrix products of [8, 4096] x [4096, 4096], the output split back.

Model (the needed work): FLOPs 2 x 8 x 4096 x 4096 x 4 = 1.07e9 (fp16, tensor cores); bytes: the weights
read once (4 x 32 MiB = 1.34e8), the activations (negligible).

Per design (H100/H200): the good step ~60-90 us (the weights' 134 MB once, launches); the bad step ~350-450 us
(1.07 GB of weight reads, 8x the needed bytes, each GEMV near DRAM bandwidth): ~4-6x. The extra time is bytes
moved at DRAM that the result does not need (the weights re-read for every request: cause "over_fetch",
resource "dram").

    python unbatched_requests.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

DIM, LAYERS, REQUESTS = 4096, 4, 8


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's [R, DIM] outputs), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.float16 if cuda else torch.float32
    d, nr = (DIM, REQUESTS) if cuda else (64, 4)
    g = torch.Generator(device=dev).manual_seed(0)
    ws = [(torch.randn(d, d, generator=g, device=dev) / d**0.5).to(dt) for _ in range(LAYERS)]
    bs = [(0.1 * torch.randn(d, generator=g, device=dev)).to(dt) for _ in range(LAYERS)]
    reqs = [[torch.randn(1, d, generator=g, device=dev).to(dt) for _ in range(nr)] for _ in range(4)]
    kept: list = []
    it = [0]

    def mlp(h):
        for k, (w, b) in enumerate(zip(ws, bs)):
            h = F.linear(h, w, b)
            if k < LAYERS - 1:
                h = F.relu(h)
        return h

    def step():
        batch = reqs[it[0] % 4]  # the requests of this step
        it[0] += 1
        if variant == "bad":
            return [mlp(x) for x in batch]  # one request at a time: the weights read once a request
        return list(mlp(torch.cat(batch)).split(1))  # one batch: the weights read once

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(torch.cat(step()))

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
