"""The inverse of a permutation computed by sorting it, ``torch.argsort(perm)`` (a radix sort of the 64-bit keys
with their indices: eight 8-bit digit passes, each reading and writing the keys and the values), where one
scatter serves (``inv.scatter_(0, perm, arange)``: inv[perm[k]] = k, each element read once and written once).
The idiom is common wherever a permutation must be undone: the token "unpermute" of mixture-of-experts layers
(the indices that sorted the tokens by expert, inverted by a second argsort), shuffled data sets restored to
their order, graph node relabelling. Sources: the torch.argsort and Tensor.scatter_ documentation; CUB's
DeviceRadixSort (onesweep: one pass a digit of 8 bits, keys and values moved every pass; D. Adinets and D.
Merrill, "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs", 2022); the NumPy idiom discussions of
inverting a permutation (argsort O(n log n) against the O(n) scatter ``inv[p] = arange(n)``); the PyTorch
performance tuning guide (pick the operation that does the needed work).

Stage ``step`` (one ``kprof.range`` per step): the inverse of one of four precomputed random permutations of N =
2^23 int64 indices (cycled), two values of each inverse kept. Bad: torch.argsort(perm) (the sort's keys and
values, 128 MB a buffer pair, through DRAM for every digit pass). Good: inv.scatter_(0, perm, ar) with ar =
arange(N) made once (perm and ar read, 64 MB each, inv written, 64 MB of random 8-byte stores). The same
inverse, exactly.

Model (the needed work): FLOPs none; bytes perm read, inv written (the scatter's index source read too):
~2e8 a step.

Per design (H100/H200): the good step ~0.1-0.15 ms (192 MB of traffic, the random stores' sectors partly
merged in L2: GPU-bound); the bad ~0.5-0.7 ms (eight digit passes each reading and writing 128 MB, plus the
histogram pass and the index initialisation): ~4-5x. The extra time is the sort's passes over the keys and
values through DRAM (cause "move_work": the needed inverse by a costlier method; resource "dram").

    python argsort_inverse.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

N, NP = 1 << 23, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (two values an inverse), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    n = N if cuda else 1000
    g = torch.Generator(device=dev).manual_seed(0)
    perms = [torch.randperm(n, generator=g, device=dev) for _ in range(NP)]
    ar = torch.arange(n, device=dev)
    inv = torch.empty(n, dtype=torch.int64, device=dev)
    kept: list = []
    it = [0]

    if variant == "bad":

        def invert(p):
            return torch.argsort(p)  # a radix sort of the keys with their indices

    else:

        def invert(p):
            return inv.scatter_(0, p, ar)  # inv[p[k]] = k

    def step():
        p = perms[it[0] % NP]
        it[0] += 1
        y = invert(p)
        return torch.stack([y[0], y[-1]])  # a copy: the good variant's inv is reused

    def loop(steps: int) -> None:
        with torch.inference_mode():
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
