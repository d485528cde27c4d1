"""Calibration pair (held out) — libdevice's precise ``powf`` in an elementwise chain where the
hardware's base-2 logarithm and exponential suffice (CUDA C++ Best Practices Guide, "Math
Libraries" and "Arithmetic Instructions": prefer the fast intrinsics ``__powf``/``exp2f``/
``__log2f`` where their accuracy is enough).

The work: every element x of an fp32 vector (n = 2^24, uniform in [0, 1)) goes ``iters`` times
through y ← h · (y + 1)^e with runtime e = 0.75, h = 0.5 (16 steps). The map is a contraction on
y ≥ 0 (|d/dy| = h·e·(y + 1)^(e−1) ≤ 0.375), so each step's approximation error is damped; the
reference iterates it in float64.

Planted problem (v0): ``libdevice.pow`` (``__nv_powf``): a logarithm in extended precision
(double-float arithmetic), the product with e, an exponential with its own range reduction and
the special cases of pow (negative bases, integer exponents, infinities, zeros). ptxas on sm_90
(Triton 3.9, SASS read without a GPU), the loop's body per element-step: ~44 FFMA/FMUL/FADD (FMA
pipe), ~25 FSETP/FSEL/LOP3/IADD3 (ALU pipe), MUFU + FRND + F2I (XU): ~75 warp instructions spread
over three pipes, so the issue slots (4 warp instructions per SM per clock), not one pipe, are
the limit (FMA 11 clk, ALU 12.5 clk, issue ~19 clk per warp-step).

Fix (v1): ``libdevice.fast_powf`` (``__nv_fast_powf``: exp2(e · log2(x)) with ``lg2.approx`` and
``ex2.approx``): two MUFU on the XU pipe and one FMUL per call, relative error ~1e-6 for these
arguments.

Model: per element 8 bytes (x read, out written) and 2 FLOPs per step (the add and the
multiply by h); pow itself counts as no FLOPs. Tolerance 1e-4 relative L2.

Expected on an H100 SXM (per design): v0 issue-limited: n·16/32 warp-steps · ~19 clk / 132 SMs /
1.755 GHz ≈ 690 µs; v1: 2 MUFU (XU, 2 clk each) + FADD + 2 FMUL per warp-step ≈ 4 clk ≈ 145 µs
(XU-limited; DRAM 134 MB ≈ 45 µs): ≈ 4-5×.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

EXPONENT = 0.75
SCALE = 0.5


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.rand(p["n"], generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "out": torch.full((p["n"],), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    y = inputs["x"].double()
    for _ in range(p["iters"]):
        y = SCALE * (y + 1.0) ** EXPONENT
    return y.float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


_STAGE = StageModel("pow", flops=lambda p: 2.0 * p["n"] * p["iters"], bytes=lambda p: 8.0 * p["n"])

KERNEL = KernelPackage(
    name="calib_pow",
    description="Calibration (held out; planted: precise pow): 16 libdevice powf per element, ~75 instructions each (v0) "
    "vs fast_powf (lg2.approx/ex2.approx: MUFU on the XU pipe) (v1)",
    params=(
        Param("n", 1 << 24, min=1, max=1 << 30, doc="elements"),
        Param("iters", 16, min=1, max=1 << 12, doc="steps y <- h * (y + 1)^e per element"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: libdevice powf (precise: extended-precision log and exp, ~75 instructions on the FMA, ALU "
            "and XU pipes), 16 steps of "
            "h * (y + 1)^e per element",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: libdevice fast_powf (exp2(e * log2 x): MUFU.LG2 and MUFU.EX2 on the XU pipe), same chain and programs",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=lambda p: 8.0 * p["n"],
    tolerance=lambda dtype: 1e-4,
)
