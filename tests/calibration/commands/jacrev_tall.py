"""Per-point Jacobians of a coordinate network f: R^3 -> R^32 (a neural field mapping a 3-D point to a 32-wide
feature, its Jacobian [32, 3] needed at every point, e.g. for a deformation or normal term) computed in reverse
mode, ``vmap(jacrev(f))`` (one vector-Jacobian product a row: 32 backward passes a point, batched), where
forward mode, ``vmap(jacfwd(f))`` (one Jacobian-vector product a column: 3 tangents pushed through the forward
pass), serves: for a "tall" function (more outputs than inputs) reverse mode does ~m / n times the work.
Sources: the torch.func documentation ("jacrev, jacfwd, and hessian" tutorial: "jacfwd ... is more efficient
for tall Jacobians, jacrev for wide ones"; torch.func.jacfwd's docstring); A. Griewank and A. Walther,
"Evaluating Derivatives" (2008), chapters 3-4 (the cost of a Jacobian: n forward or m reverse sweeps); A. G.
Baydin et al., "Automatic differentiation in machine learning: a survey" (JMLR 2018), section 3 (forward mode
for f: R^n -> R^m with n << m).

Stage ``step`` (one ``kprof.range`` per step, inference of the Jacobians, no parameter gradients): an MLP 3 ->
256 -> 256 -> 256 -> 32 with tanh (fp32, PyTorch's default matmul precision) at 16384 points (one of four point
sets in turn); J [16384, 32, 3]; two values kept a step. Bad: vmap(jacrev(f)): the forward once, then 32
batched VJPs (GEMMs of [16384 x 32, 256] and the tanh derivative on [16384 x 32, 256] tensors). Good:
vmap(jacfwd(f)): the forward with 3 tangents ([16384 x 3, 256]). The same Jacobian (to fp32 rounding).

Model (the needed work): forward mode's FLOPs, 4 sweeps of the MLP (2 x 139 k MACs a point a sweep): ~1.8e10 a
step; bytes: the sweeps' activations ([16384 x 4, 256] fp32 a layer, written and read) and J: ~3e8 a step.

Per design (H100/H200): the good step ~0.4-0.7 ms (fp32 GEMMs of 1.8e10 FLOPs at ~40-50 TFLOP/s and small
elementwise passes); the bad ~33 sweeps' GEMMs (1.5e11 FLOPs: ~3 ms) and 537 MB tanh-derivative tensors a
layer (~0.7 ms): ~3.5-4.5 ms: ~5-8x. The extra time is the needed Jacobian computed by a costlier method (cause
"move_work"; resource None: the fp32 GEMMs on the FMA pipes and the memory-bound derivative passes share it).

    python jacrev_tall.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run
from torch.func import jacfwd, jacrev, vmap

import kprof

N, D_IN, WIDTH, D_OUT, NX = 16384, 3, 256, 32, 4


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (two values a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    n, w = (N, WIDTH) if cuda else (8, 16)
    g = torch.Generator(device=dev).manual_seed(0)
    dims = [D_IN, w, w, w, D_OUT]
    ws = [torch.randn(a, b, generator=g, device=dev) / a**0.5 for a, b in zip(dims[:-1], dims[1:])]
    bs = [0.1 * torch.randn(b, generator=g, device=dev) for b in dims[1:]]
    xs = [torch.rand(n, D_IN, generator=g, device=dev) * 2 - 1 for _ in range(NX)]

    def f(x):  # one point [3] -> [32]
        h = x
        for i, (wi, bi) in enumerate(zip(ws, bs)):
            h = h @ wi + bi
            if i < len(ws) - 1:
                h = torch.tanh(h)
        return h

    jac = vmap(jacrev(f) if variant == "bad" else jacfwd(f))
    kept: list = []
    it = [0]

    def step():
        j = jac(xs[it[0] % NX])  # [n, 32, 3]
        it[0] += 1
        return j[0, :2, 0]

    def loop(steps: int) -> None:
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
