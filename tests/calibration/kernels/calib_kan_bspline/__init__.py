"""Calibration pair (thirtieth held-back set) — the cubic B-spline activations of a Kolmogorov-Arnold Network
(KAN) layer evaluated as the reference implementations do: every one of the grid's basis functions computed for
every input by the Cox-de Boor recursion over the knot vector (degree-0 indicators, then three levels of
recursion, two divisions by knot differences a term: 54 divisions an input for 8 basis functions), then a dot
product with each output's coefficients; where, the grid being uniform (KAN's default grid), only the four
non-zero basis functions of the input's interval matter and their values are the closed-form uniform cubic
B-spline weights (a few multiply-adds). Sources: Liu et al., "KAN: Kolmogorov-Arnold Networks" (2024) and its
reference code (pykan's B_batch) and efficient-kan's ``b_splines`` (the recursion over the whole grid, as
tensors); C. de Boor, "A Practical Guide to Splines" (the recursion; only k + 1 basis functions are non-zero at a
point); the uniform cubic B-spline basis matrix (e.g. Foley, van Dam et al., "Computer Graphics", 11.2); the CUDA
C++ Best Practices Guide ("Arithmetic Instructions", "Division ... use multiplication by the reciprocal") and the
Programming Guide's throughput table.

The work: Y [4, N] fp16 = the four splines of an input feature, y_o(x) = sum_m C[o, m] B_m(x), for x [N] fp16 in
[-1, 1), cubic B-splines (k = 3) on a uniform grid of G = 5 intervals over [-1, 1] extended by k knots on each
side (T [12] fp32 knots, C [4, 8] fp32 coefficients).

Planted problem (v0): stage "bspline_deboor": the 12 knots loaded, the 11 degree-0 indicators, then 10 + 9 + 8
Cox-de Boor terms B = (x - t_m) / (t_{m+d} - t_m) B_m + (t_{m+d+1} - x) / (t_{m+d+1} - t_{m+1}) B_{m+1} (54
divisions, ~300 instructions an input: reciprocals on the MUFU and the divisions' fix-ups and the recursion's
multiply-adds on the FMA pipes and the issue slots), then 4 x 8 multiply-adds.
Fix (v1): stage "bspline_uniform": u = (x - t_3) / h, j = floor(u), f = u - j, the four weights (1 - f)^3 / 6,
(3f^3 - 6f^2 + 4) / 6, (-3f^3 + 3f^2 + 3f + 1) / 6, f^3 / 6, and y_o = sum_i C[o, j + i] w_i (16 gathers from
the 128-byte coefficient table, in L1): memory-bound.

Model (the needed work, for both): 4 x 8 FLOPs an input (the four 4-term dot products); bytes: x read (2 B) and
the four outputs written (8 B): 10 B an input.

Expected on an H100/H200 (per design): v1 ~45-55 us (2^24 inputs, 168 MB at ~3.5-4 TB/s); v0 ~300 instructions
an input, 54 of them MUFU reciprocals (16 a clock an SM): ~2.5-3.5 SM clocks an input, ~160-230 us: ~3-5x.
Cause "move_work" (the needed values by a costlier method: the full recursion over every basis function where
the four uniform weights serve); resource None (the work spreads over the MUFU, the FMA pipes and the issue
slots; no one pipe owns it).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

G, K, OUT = 5, 3, 4  # grid intervals, spline degree, outputs (splines) an input


def _knots(dtype):
    import torch

    h = 2.0 / G
    return -1.0 + (torch.arange(G + 2 * K + 1, dtype=torch.float64) - K) * h


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.rand(p["N"], generator=g, dtype=torch.float64) * 2.0 - 1.0
    x[::101] = -1.0  # on the first knot of the domain
    x[1::103] = 0.999  # the end of the domain (the last interval)
    x = x.clamp(-1.0, 0.999).to(torch.float16)
    coef = torch.randn((OUT, G + K), generator=g)
    return {
        "X": x.to(device),
        "T": _knots(torch.float64).float().to(device),
        "C": coef.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((OUT, p["N"]), float("nan"), device=device, dtype=torch.float16),
    }


def _reference(inputs, p):
    import torch

    # the Cox-de Boor recursion in fp64 over the whole grid (vectorised over the knots), on the CPU
    x = inputs["X"].cpu().double()[:, None]
    t = _knots(torch.float64)
    b = ((x >= t[:-1]) & (x < t[1:])).double()
    for d in range(1, K + 1):
        left = (x - t[: -(d + 1)]) / (t[d:-1] - t[: -(d + 1)]) * b[:, :-1]
        right = (t[d + 1 :] - x) / (t[d + 1 :] - t[1:-d]) * b[:, 1:]
        b = left + right
    y = b @ inputs["C"].cpu().double().T  # [N, OUT]
    return y.T.contiguous().to(torch.float16).to(inputs["X"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * OUT * 4 * p["N"]


def _bytes(p):
    return (2.0 + 2.0 * OUT) * p["N"]


KERNEL = KernelPackage(
    name="calib_kan_bspline",
    description="Calibration (held back, set 30; planted: a KAN layer's cubic B-spline basis computed over the "
    "whole grid by the Cox-de Boor recursion where the four uniform cubic weights serve): 4 splines of 2^24 fp16 "
    "inputs; v0 the recursion (54 divisions an input), v1 the closed-form weights",
    params=(
        Param("N", 1 << 24, min=1, max=1 << 27, doc="inputs"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: every basis function of the grid by the Cox-de Boor recursion (54 divisions an input)",
            (StageModel("bspline_deboor", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the four non-zero uniform cubic B-spline weights in closed form",
            (StageModel("bspline_uniform", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 2e-3,
)
