"""Determinants of a large batch of 3 x 3 matrices computed with ``torch.linalg.det`` (a batched LU factorisation
with partial pivoting: the batch copied to column-major order, ``getrf`` run on every 3 x 3 matrix through the
batched LAPACK-style path, the pivots turned into a sign and the diagonal multiplied out) where the closed form
serves: det A = a0 . (a1 x a2), the scalar triple product of the rows (one cross product, one multiply, one
three-term sum: elementwise kernels over the batch). Batches of small fixed-size matrices are everywhere in
geometry and physics code (orientation tests and signed volumes of tetrahedra in mesh processing, Jacobian
determinants of finite elements and of 3-D deformation fields, rotation checks), and the general library routine
is the first thing reached for. Sources: the torch.linalg.det documentation (computed through the LU
decomposition); the cuBLAS documentation, cublas<t>getrfBatched (LU factorisation of a batch of small matrices
through an array of device pointers); the CUDA C++ Best Practices Guide, "Instruction Optimization" / "Math
Libraries" (pick the operation that does the needed work); PyTorch forum and issue reports of batched 3 x 3
det / inverse being far slower on the GPU than the closed form.

Stage ``step`` (one ``kprof.range`` per step, inference): the determinants of one of two batches of N = 2^22 3 x 3
fp32 matrices (151 MB each, used in turn; each matrix 2 I plus noise, well conditioned), two values kept. Bad:
torch.linalg.det(A). Good: (A[:, 0] * torch.linalg.cross(A[:, 1], A[:, 2], dim=-1)).sum(-1). The same
determinants to fp32 rounding.

Model (the needed work): FLOPs 17 a matrix (the triple product), 7.1e7 a step; bytes the batch read once and the
determinants written: 36 + 4 B a matrix, 1.7e8 a step.

Per design (H100/H200): the good step ~100-150 us (three elementwise kernels streaming the batch and its 12-byte
rows through DRAM, ~0.5 GB); the bad ~0.6-1.5 ms (the column-major copy of the batch, the batched getrf with
its pointer array, pivot search and row swaps for every 3 x 3 matrix, the pivot-sign and diagonal-product
kernels): ~5-10x. The extra time is the general factorisation where a 17-FLOP formula gives the same result
(cause "move_work"; resource None: the limiter is the routine's kernels, not one pipe or memory level).

    python det3_lu.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

N, NX = 1 << 22, 2


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (two values a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    n = N if cuda else 1000
    g = torch.Generator(device=dev).manual_seed(0)
    eye = torch.eye(3, device=dev)
    mats = [2.0 * eye + 0.3 * torch.randn(n, 3, 3, generator=g, device=dev) for _ in range(NX)]
    kept: list = []
    it = [0]

    if variant == "bad":

        def det(a):
            return torch.linalg.det(a)  # a batched LU factorisation of every 3 x 3 matrix

    else:

        def det(a):
            return (a[:, 0] * torch.linalg.cross(a[:, 1], a[:, 2], dim=-1)).sum(-1)  # the triple product

    def step():
        y = det(mats[it[0] % NX])
        it[0] += 1
        return torch.stack([y[0], y[-1]])

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
