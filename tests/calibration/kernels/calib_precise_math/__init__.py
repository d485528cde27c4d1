"""Calibration pair — precise transcendentals where the hardware approximations suffice (issue 36:
the FMA/ALU pipes the limiter, the XU pipe the alternative).

The work: every element x of an fp32 vector (n = 2^24, uniform in [0, 1)) goes ``iters`` times
through y ← ½·sin(y) + ½·cos(y) (16 steps: 32 transcendentals per element). The map is a
contraction (|d/dy| = |cos y − sin y| / 2 ≤ 0.71), so each step's rounding error is damped, not
amplified; the reference iterates it in float64.

Planted problem (v0): libdevice's precise ``sin``/``cos`` (``__nv_sinf``/``__nv_cosf``, what
``tl.sin``/``tl.cos`` compile to as well): Cody-Waite range reduction and a minimax polynomial,
~20-30 FFMA/FMUL/integer instructions per call on the FMA and ALU pipes (and a Payne-Hanek
slow path, never taken here: |y| ≤ 1.5). 8 elements per thread (1024-element programs, 4 warps).

Fix (v1): libdevice's ``fast_sinf``/``fast_cosf`` (PTX ``sin.approx.f32``/``cos.approx.f32``):
an FMUL by 1/(2π) and one MUFU.SIN/MUFU.COS on the XU pipe (16 results per SM per clock on an
H100, CUDA C++ Programming Guide's throughput table), absolute error ≤ 2^-21 on [-π, π]: the
contraction keeps the output within ~1e-6 of the exact one. The CUDA C++ Best Practices Guide
("Math Libraries": ``-use_fast_math``, ``__sinf``) names the trade.

Model: per element 8 bytes (x read, out written) and 2 FLOPs per step's combination
(2·iters·2: the two multiplies and the add counted as FMA + MUL); the transcendentals are not
FLOPs in this model. Tolerance 1e-4 relative L2 (the fix's approximation stays far below).

Expected on an H100 SXM (per design): v0 ≈ n·32 calls·~25 instructions/32 lanes at 4 warp
instructions per SM per clock ≈ 400 µs (issue-bound on FMA+ALU); v1: 32 MUFU per element at 16 per
SM per clock ≈ 130 µs (XU-bound; DRAM 134 MB ≈ 45 µs): ≈ 3×.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

HALF = 0.5


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.rand(p["n"], generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "out": torch.full((p["n"],), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    import torch

    y = inputs["x"].double()
    for _ in range(p["iters"]):
        y = HALF * torch.sin(y) + HALF * torch.cos(y)
    return y.float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


_STAGE = StageModel("trig", flops=lambda p: 4.0 * p["n"] * p["iters"], bytes=lambda p: 8.0 * p["n"])

KERNEL = KernelPackage(
    name="calib_precise_math",
    description="Calibration (planted: precise transcendentals): 32 libdevice sin/cos per element on the FMA/ALU "
                "pipes (v0) vs the hardware approximations sin.approx/cos.approx on the XU pipe (v1)",
    params=(Param("n", 1 << 24, min=1, max=1 << 30, doc="elements"),
            Param("iters", 16, min=1, max=1 << 12, doc="steps y <- (sin y + cos y)/2 per element"),
            DTYPE_PARAM("float32", choices=("float32",))),
    make_inputs=_inputs,
    reference=_reference,
    versions=(Version("v0", "planted: libdevice sin/cos (precise: range reduction and polynomial on the FMA/ALU "
                            "pipes), 16 steps of (sin y + cos y)/2 per element", (_STAGE,), _build("v0")),
              Version("v1", "fix: libdevice fast_sinf/fast_cosf (sin.approx/cos.approx: MUFU on the XU pipe), same "
                            "chain and programs", (_STAGE,), _build("v1"))),
    memory_bytes=lambda p: 8.0 * p["n"],
    tolerance=lambda dtype: 1e-4,
)
