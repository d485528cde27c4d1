"""A CPU-bound Python thread beside the training loop, in the same process: a "prefetch" thread that
tokenises text in pure Python for batches to come (threading.Thread, as if threads ran in parallel), so the
loop's thread and it contend for the GIL. Every PyTorch call releases the GIL around its C++ work (the
kernel launch); the busy thread takes it at once, and the loop's thread gets it back only when the
interpreter forces a switch, after the switch interval (sys.getswitchinterval(), 5 ms): each launch of the
step waits up to 5 ms, the host falls behind the GPU and the GPU idles between kernels (the "convoy
effect"). Nothing fails; the outputs are the same. The fix: the Python work in a worker process (its own
interpreter and GIL: multiprocessing, DataLoader workers). Sources: D. Beazley, "Understanding the Python
GIL" (PyCon 2010: I/O-bound threads starved by a CPU-bound thread under the new GIL), CPython issue
bpo-7946 / gh-52194 "Convoy effect with I/O bound threads and New GIL", the Python documentation of
sys.setswitchinterval, and the PyTorch documentation of torch.utils.data (worker processes, not threads,
for Python-heavy loading).

Stage ``step`` (one ``kprof.range`` per step): inference (torch.inference_mode) on x [8192, 8192] bf16
through 6 Linear(8192, 8192, no bias) + GELU layers (two launches a layer); each step's output mean kept.
Bad: while the loop runs, a thread of this process tokenises text without pause (pure Python: str.split,
hash, list comprehensions, never releasing the GIL). Good: the same tokenising in a forked worker process.
The same outputs.

Per design (H100 SXM): the GEMMs 6 x 1.1 TFLOP ~1.8 ms each, the GELUs ~0.1 ms: good ~11-12 ms a step
(GPU-bound, the host ahead); bad: ~14 GIL hand-backs a step at up to 5 ms each, ~40-70 ms: ~3-6x. The
extra time is the host (its launches wait for the interpreter held by other Python work: cause "host"),
resource None.

    python gil_thread.py --variant bad --steps 20
"""

from __future__ import annotations

import multiprocessing
import threading

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

ROWS, WIDTH, LAYERS = 8192, 8192, 6
TEXT = "the quick brown fox jumps over the lazy dog while the tokeniser counts every word " * 40


def _tokenise(stopped) -> int:
    """Pure-Python work until ``stopped()``: the GIL held all the while (no call that releases it)."""
    n = 0
    while not stopped():
        for _ in range(20):
            toks = [hash(w) % 50021 for w in TEXT.split()]
            n += sum(t & 7 for t in toks)
    return n


def _worker(ev) -> None:
    _tokenise(ev.is_set)


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's output mean), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    n, d = (ROWS, WIDTH) if cuda else (16, 64)
    g = torch.Generator().manual_seed(0)
    weights = [(torch.randn(d, d, generator=g) / d**0.5).to(dev, dt) for _ in range(LAYERS)]
    x = torch.randn(n, d, generator=g).to(dev, dt)
    kept: list = []

    def steps_(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    h = x
                    for w in weights:
                        h = F.gelu(F.linear(h, w))
                    kept.append(h.float().mean())

    def loop(steps: int) -> None:
        if variant == "bad":  # the planted form: the tokeniser a thread of this process
            ev = threading.Event()
            t = threading.Thread(target=_tokenise, args=(ev.is_set,), daemon=True)
        else:  # the fix: the same work in a worker process (its own GIL)
            ev = multiprocessing.get_context("fork").Event()
            t = multiprocessing.get_context("fork").Process(target=_worker, args=(ev,), daemon=True)
        t.start()
        try:
            steps_(steps)
        finally:
            ev.set()
            t.join()

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()
