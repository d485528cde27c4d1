"""Calibration pair (held out) — a floating-point division per step of a hot loop where a
reciprocal computed once suffices (CUDA C++ Best Practices Guide, "Arithmetic Instructions":
division is a reciprocal plus correction steps; multiply by a precomputed reciprocal instead).

The work: every element x of an fp32 vector (n = 2^24, uniform in [0, 1)) goes ``iters`` times
through y ← (y + x) / d with d = x + s, s = 1.5 a runtime scalar (64 steps): each element has
its own divisor, the same in every step (a normalisation inside an iteration). The map is a
contraction (factor 1/d ≤ 2/3), so rounding differences are damped; the reference iterates it in
float64.

Planted problem (v0): ``tl.div_rn(y + x, d)`` in the loop: IEEE round-to-nearest fp32 division
(``div.rn.f32``, what CUDA C's ``a / d`` is under the default ``-prec-div=true``). ptxas on sm_90
(Triton 3.9, SASS read without a GPU): per division MUFU.RCP (XU pipe), FCHK, five FFMA and an
FADD (FMA pipe) for the Newton correction and the numerator, and BSSY/BRA/BSYNC around the
slow-path CALL (never taken here): ~12 warp instructions per step per element, 64 steps. The
reciprocal of d is not hoisted: the correction needs each numerator.

Fix (v1): r = 1 / d once per element before the loop, then y ← (y + x) · r: an FADD and an FMUL
per step (ptxas fuses consecutive steps into FFMA: ~1.25 FMA-pipe instructions per step).

Model: per element 8 bytes (x read, out written) and 2 FLOPs per step (the add and the
division or multiply). Tolerance 1e-5 relative L2.

Expected on an H100 SXM (per design): v0 issue-limited: ~12 warp instructions per warp-step at 4
issued per SM per clock = 3 SM clocks (XU: one MUFU at 16 lanes per SM per clock = 2 clocks;
FMA: 6 at 128 lanes = 1.5 clocks): n·64/32 warp-steps · 3 clk / 132 SMs / 1.755 GHz ≈ 430 µs;
v1: ~1.3 instructions per warp-step ≈ 0.33 clk ≈ 50 µs, about DRAM's 134 MB ≈ 45 µs: ≈ 8×.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

DIVISOR = 1.5


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.rand(p["n"], generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "out": torch.full((p["n"],), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    x = inputs["x"].double()
    d = x + DIVISOR
    y = x.clone()
    for _ in range(p["iters"]):
        y = (y + x) / d
    return y.float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


_STAGE = StageModel("div", flops=lambda p: 2.0 * p["n"] * p["iters"], bytes=lambda p: 8.0 * p["n"])

KERNEL = KernelPackage(
    name="calib_fdiv",
    description="Calibration (held out; planted: a division per step): y <- (y + x) / (x + s) 64 times per element "
    "(v0: IEEE div.rn.f32 per step) vs one reciprocal per element and a multiply per step (v1)",
    params=(
        Param("n", 1 << 24, min=1, max=1 << 30, doc="elements"),
        Param("iters", 64, min=1, max=1 << 12, doc="steps y <- (y + x) / (x + s) per element"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: IEEE fp32 division tl.div_rn(y + x, d) in every step (div.rn.f32: MUFU.RCP, FCHK, "
            "a Newton correction and a slow-path branch per division)",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: r = 1/d once per element, (y + x) * r per step (FADD + FMUL on the FMA pipe); same programs",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=lambda p: 8.0 * p["n"],
    tolerance=lambda dtype: 1e-5,
)
