"""An ensemble of independent small models (eight members: per-member linear recurrences, an exponential
moving-average / linear-RNN filter bank run over a batch of 8 sequences each) evaluated one member after
another on PyTorch's current (default) stream. Each member's kernel has one program a sequence: 8
programs on a 132-SM GPU, each walking its 1,024 time steps. Kernels on one stream run one after the
other, so 124 SMs idle through all eight, although the members share nothing. The fix issues each
member on a stream of its own (torch.cuda.Stream, entered after the side streams wait for the default
stream; the default stream waits for them before the outputs are read): the eight kernels run at once.
Sources: the CUDA C++ Programming Guide, "Asynchronous Concurrent Execution" / "Concurrent Kernel
Execution" and "Streams"; Mark Harris, "GPU Pro Tip: CUDA 7 Streams Simplify Concurrency" (NVIDIA
developer blog, 2015: one-block kernels serialised on the default stream, concurrent on eight streams);
PyTorch's "CUDA semantics" page (CUDA streams, ``torch.cuda.stream``, ``wait_stream``).

Stage ``step`` (one ``kprof.range`` per step): for each of 8 members, a Triton kernel h_t = a ⊙ h_{t-1}
+ x_t over x [8 sequences, 1024 steps, 256 channels] fp32 (its own decays a [256]), every h_t stored
(out [8, 1024, 256]); the members' last states' means kept. Bad: the eight launches on the current
stream. Good: each launch under ``torch.cuda.stream(side[m])``. The same kernels, data and outputs.

Per design (H100 SXM): a member's kernel ~0.1-0.3 ms (8 programs, each a chain of 1,024 dependent
steps of a 1 KB load and store); bad eight of them back to back, ~1-2.5 ms a step; good the eight
overlapped, ~0.15-0.35 ms: ~5-8x. The extra time is kernels serialised on one stream that could run
together (cause "streams"; no pipe or memory level limits either variant: resource None).

    python ensemble_one_stream.py --variant bad --steps 20
"""

from __future__ import annotations

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from _common import parser, run  # noqa: E402

import kprof  # noqa: E402

MEMBERS, SEQS, T, D = 8, 8, 1024, 256


@triton.jit
def _scan(x_ptr, a_ptr, out_ptr, T, D: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.arange(0, D)
    a = tl.load(a_ptr + cols)
    h = tl.zeros([D], tl.float32)
    base = b.to(tl.int64) * T * D
    for t in range(0, T):
        h = a * h + tl.load(x_ptr + base + t * D + cols)
        tl.store(out_ptr + base + t * D + cols, h)


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's members' mean last states), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    members, seqs, t, d = (MEMBERS, SEQS, T, D) if cuda else (3, 2, 16, 32)
    g = torch.Generator().manual_seed(0)
    xs = [torch.randn(seqs, t, d, generator=g).to(dev) for _ in range(members)]
    decays = [(0.5 + 0.49 * torch.rand(d, generator=g)).to(dev) for _ in range(members)]
    out = torch.empty(members, seqs, t, d, device=dev)  # member m's states in out[m]
    side = [torch.cuda.Stream() for _ in range(members)] if cuda and variant == "good" else None
    warps = 2 if cuda else 1
    kept: list = []

    def launch(m: int) -> None:
        _scan[(seqs,)](xs[m], decays[m], out[m], t, D=d, num_warps=warps)

    def loop(steps: int) -> None:
        for _ in range(steps):
            with kprof.range("step"):
                if side is None:  # the planted form: every member on the current stream, one after another
                    for m in range(members):
                        launch(m)
                else:  # the fix: a stream a member; the default stream waits for all of them
                    main = torch.cuda.current_stream()
                    for m in range(members):
                        side[m].wait_stream(main)
                        with torch.cuda.stream(side[m]):
                            launch(m)
                    for m in range(members):
                        main.wait_stream(side[m])
                kept.append(out[:, :, -1].mean(dim=(1, 2)))

    return loop, (lambda: torch.stack(kept).float().cpu().flatten())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
