"""Calibration pair (sixteenth held-back set) — an iterative solver run for a fixed iteration count far
past convergence: Sinkhorn's matrix scaling (entropic optimal transport; the matching layer of SuperGlue /
LightGlue-style feature matchers, Sinkformer attention, differentiable sorting / assignment) run for a
fixed 100 iterations, as in SuperGlue's reference code, where the scalings reach the marginals to the
tolerance within ~10-20 iterations; the fix tests the marginal error each iteration and stops there (as
POT's ot.sinkhorn does with stopThr). Sources: Cuturi, "Sinkhorn Distances: Lightspeed Computation of
Optimal Transport" (NeurIPS 2013); Sarlin et al., "SuperGlue" (CVPR 2020: 100 Sinkhorn iterations);
Peyré & Cuturi, "Computational Optimal Transport" (2019), §4.2 (the stopping criterion on the
marginals); the POT library's ot.sinkhorn (numItermax, stopThr).

The work: B = 16384 independent problems, each a cost matrix C [n, n] (n = 32, fp32, uniform in
[0, 1)), uniform marginals 1/n, regularisation ε = 0.5: K = exp(-C/ε); u = a / (K v), v = b / (Kᵀ u)
repeated; the plan P = diag(u) K diag(v) [B, n, n] fp32. One program per problem (1 warp), its K held
in registers for all iterations; C read once, P written once.

Planted problem (v0): ``for it in range(100)`` (no test).
Fix (v1): the same iteration, followed by the row-marginal error max_i |u_i (K v)_i - 1/n| · n; the
loop stops when it is below 1e-5 (at most 100 iterations). The same plan to within the tolerance: the
iterations v0 adds change P by less than the test's threshold.

Model: per problem the needed iterations (12, per design) of two n x n matrix-vector products (4n²
FLOPs) and 2n divisions, plus the exponentials and the plan (3n²): ~53 kFLOP; bytes 2·n²·4 (C read,
P written): ~0.87 GFLOP and 134 MB at the defaults.

Expected on an H100 SXM (per design): an iteration ~0.4-0.5 k warp-instructions a problem (the
products' multiplies, the cross-lane reductions' shuffles and adds, the divisions): v0 100 iterations
~0.7-1.0 ms, v1 ~10-20 iterations ~0.1-0.2 ms (the loads and stores ~0.05 ms): ~4-7x. The extra time
is iterations that do not change the result (cause "move_work": the same result by less work); no
single pipe or memory level owns it (multiplies, shuffles and reductions, issue-bound): resource None.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

EPS, TOL, MAX_ITERS, NEEDED_ITERS = 0.5, 1e-5, 100, 12


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    b, n = p["B"], p["n"]
    c = torch.rand(b, n, n, generator=g).to(device)
    # Poisoned output: a version that does not write every element fails the check.
    return {"c": c, "out": torch.full((b, n, n), float("nan"), device=device)}


def _reference(inputs, p):
    import torch

    k = torch.exp(-inputs["c"].double() / EPS)
    n = p["n"]
    a = torch.full(k.shape[:2], 1.0 / n, dtype=torch.float64, device=k.device)
    v = torch.ones_like(a)
    for _ in range(400):  # converged to double rounding
        u = a / (k @ v[..., None])[..., 0]
        v = a / (k.transpose(1, 2) @ u[..., None])[..., 0]
    return (u[:, :, None] * k * v[:, None, :]).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return 2.0 * p["B"] * p["n"] ** 2 * 4


_STAGE = StageModel(
    "sinkhorn",
    flops=lambda p: float(p["B"]) * (NEEDED_ITERS * (4.0 * p["n"] ** 2 + 2 * p["n"]) + 3.0 * p["n"] ** 2),
    bytes=_bytes,
)

KERNEL = KernelPackage(
    name="calib_sinkhorn_iters",
    description="Calibration (held back, set 16; planted: an iterative solver run for a fixed iteration count "
    "far past convergence): Sinkhorn scaling of 16384 entropic transport problems of 32 x 32 (fp32, ε = 0.5); "
    "v0 100 iterations, v1 the same iteration stopped when the marginal error is below 1e-5",
    params=(
        Param("B", 16384, min=1, max=1 << 22, doc="independent problems (one program each)"),
        Param("n", 32, min=2, max=64, doc="rows and columns of each cost matrix"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: 100 Sinkhorn iterations, no convergence test", (_STAGE,), _build("v0")),
        Version(
            "v1",
            "fix: the same iterations, stopped when the row-marginal error is below 1e-5 (at most 100)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-3,
)
