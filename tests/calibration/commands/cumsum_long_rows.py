"""Running sums along long rows of a small batch with ``torch.cumsum(x, dim=1)`` on a [8, 262144] tensor, where a
scan per row serves: PyTorch's CUDA scan along the innermost dimension of a tensor with several rows
(``scan_innermost_dim``) gives each row 16 threads of a 16 x 32-thread block and launches ceil(rows / 32) blocks:
one block for the eight rows, on one of the 132 SMs, walking each 262144-sample row 32 samples at a time with a
block-wide scan per step; a 1-D tensor's cumsum goes through CUB's device-wide scan instead (many blocks,
decoupled look-back), so ``torch.cumsum(x[b], 0, out=y[b])`` for each of the 8 rows fills the GPU. The same sums
up to the fp32 addition order. Sources: the CUDA C++ Best Practices Guide ("Execution Configuration": the number
of blocks in a grid should be larger than the number of multiprocessors, so that all multiprocessors have at
least one block to execute); the PyTorch source (aten/src/ATen/native/cuda/ScanUtils.cuh: scan_dim's three
paths); NVIDIA CUB's DeviceScan (Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled
Look-back", 2016).

Stage ``step`` (one ``kprof.range`` per step): x [8, 262144] fp32 (one of four on the GPU in turn: e.g. the
increments of 8 long signals or per-token log-probabilities of 8 long sequences), y = the running sums along
each row, written to a preallocated y. Bad: ``torch.cumsum(x, dim=1, out=y)`` (one thread block). Good: ``for b
in range(8): torch.cumsum(x[b], dim=0, out=y[b])`` (a CUB scan a row, each over the whole GPU).

Model (the needed work): FLOPs one add a sample: 2.1e6; bytes x read and y written once: 1.68e7.

Per design (H100/H200): the good step ~60-100 us (8 CUB scans of 1 MiB, ~16 small kernels: launch-bound); the
bad step ~300-600 us (one SM's block walking 8192 steps of 32 samples, a block scan and barriers a step): ~4-6x.
The extra time is the one-block grid: fewer programs than SMs (cause "few_blocks", resource None).

    python cumsum_long_rows.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

B, L = 8, 262144


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each row's total and midpoint sum a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, n = (B, L) if cuda else (3, 1000)
    g = torch.Generator(device=dev).manual_seed(0)
    xs = [torch.randn(b, n, generator=g, device=dev) for _ in range(4)]
    y = torch.empty(b, n, device=dev)
    kept: list = []
    it = [0]

    def step():
        x = xs[it[0] % 4]
        it[0] += 1
        if variant == "bad":
            torch.cumsum(x, dim=1, out=y)
        else:
            for r in range(b):
                torch.cumsum(x[r], dim=0, out=y[r])
        return y[:, [n // 2, n - 1]].clone()

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
