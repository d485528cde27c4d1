"""Calibration pair (thirty-third held-back set) — a polynomial interpolant through n = 32 Chebyshev points
evaluated at many points by the textbook Lagrange formula (for every node j the product of the n - 1 factors
(t - x_k) rebuilt at every evaluation point: O(n^2) FP32 operations a point), where the barycentric formula of
the second kind with weights computed once (O(n) a point) gives the same values. Sources: J.-P. Berrut and
L. N. Trefethen, "Barycentric Lagrange Interpolation" (SIAM Review 46(3), 2004: the Lagrange form "requires
O(n^2) operations for each evaluation", the barycentric form O(n) once the weights are known, and for Chebyshev
points of the second kind the weights are (-1)^j, halved at the ends); N. J. Higham, "The numerical stability of
barycentric Lagrange interpolation" (IMA J. Numer. Anal. 2004); the CUDA C++ Programming Guide (arithmetic
instruction throughput: FP32 add and multiply on the FMA pipes).

The work: p(t) for P points t in [-1, 1] (fp32), nodes x_j = cos(j pi / (n - 1)) and values y_j (fp32), the same
in both versions.

Planted problem (v0): stage "lagrange": one program per 1024 points; for every node j, the product of (t - x_k)
over k != j (an FP32 subtract and multiply per factor, n - 1 factors) times y_j / prod_k (x_j - x_k) (a scalar
per program): ~2 n^2 = 2048 FP32 operations a point.
Fix (v1): stage "barycentric": the same programs; per node one subtract, one division w_j / (t - x_j) and two
adds (the numerator and denominator sums), the quotient at the end; a point equal to a node takes that node's
value. ~5 n operations a point.

Model (the needed work, for both): FLOPs 5 P n (the barycentric form); bytes the points read and the values
written (8 P) and the nodes (12 n).

Expected on an H100/H200 (per design): v0 ~0.3-0.6 ms at P = 2^22 (~9e9 FP32 operations on the FMA pipes); v1
~40-80 us (the divisions, ~15 instructions a node a point; 32 MB moved): ~5-10x. Cause "move_work" (the needed
values by a costlier formula); resource "fma" (the subtracts and multiplies of the products).
"""

import math

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    n, pts = p["NODES"], p["P"]
    g = torch.Generator(device="cpu").manual_seed(0)
    j = torch.arange(n, dtype=torch.float64)
    x = torch.cos(j * math.pi / (n - 1))
    w = (-1.0) ** j
    w[0], w[-1] = w[0] / 2, w[-1] / 2
    y = torch.rand(n, generator=g, dtype=torch.float64) * 2.0 - 1.0
    t = torch.rand(pts, generator=g, dtype=torch.float64) * 2.0 - 1.0
    return {
        "t": t.float().to(device),
        "x": x.float().to(device),
        "y": y.float().to(device),
        "w": w.float().to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((pts,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    t = inputs["t"].double().cpu()
    x, y, w = (inputs[k].double().cpu() for k in ("x", "y", "w"))
    d = t[:, None] - x[None, :]
    hit = d == 0
    q = w[None, :] / torch.where(hit, torch.ones_like(d), d)
    val = (q * y[None, :]).sum(1) / q.sum(1)
    exact = (hit.double() * y[None, :]).sum(1)
    return torch.where(hit.any(1), exact, val).float().to(inputs["t"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 5.0 * p["P"] * p["NODES"]


def _bytes(p):
    return 8.0 * p["P"] + 12.0 * p["NODES"]


KERNEL = KernelPackage(
    name="calib_lagrange_interp",
    description="Calibration (held back, set 33; planted: an interpolant evaluated by the O(n^2) Lagrange "
    "formula where the barycentric formula serves): p(t) at 2^22 points through 32 Chebyshev nodes; v0 the "
    "Lagrange products, v1 the barycentric sums",
    params=(
        Param("P", 1 << 22, min=1, max=1 << 28, doc="evaluation points"),
        Param("NODES", 32, min=2, max=128, doc="interpolation nodes"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the Lagrange formula, n - 1 products a node rebuilt at every point",
            (StageModel("lagrange", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the barycentric formula of the second kind, weights computed once",
            (StageModel("barycentric", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 2e-4,
)
