"""Calibration pair (ninth held-back set) — a Fourier series evaluated with a sine and a cosine per harmonic
where one sine and one cosine per point suffice: sin(k·x), cos(k·x) follow from sin(x), cos(x) by the angle
addition (a rotation: two multiplies and two FMAs a harmonic) (CUDA C++ Best Practices Guide, "Instruction
optimization" and "Math libraries": strength reduction, do the least work that gives the result; the
programming guide's throughput tables: a libdevice sinf/cosf is tens of FP32 instructions with its range
reduction; Nsight Compute's pipe utilisation: the FMA pipe busy with range reductions and polynomials).

The work: a periodic function (a Fourier feature map, a spectral synthesis, a learned periodic activation)
y[i] = sum_{k=1..K} a[k]·sin(k·x[i]) + b[k]·cos(k·x[i]) for N = 2^23 points x in [-pi, pi) (float32; fp16
allowed for the CPU interpreter), K = 64 harmonics (a, b float32, ~1/k), y in x's dtype, fp32 math. One
program of 4 warps per 1024 points (8 per thread), a runtime loop over the harmonics, both versions.

Planted problem (v0): the series written as its formula, ``s = tl.sin(kf * x); c = tl.cos(kf * x)`` for every
harmonic: 2·K = 128 libdevice sinf/cosf per point (Triton 3.9's PTX for sm_90: tl.sin and tl.cos are the
precise libdevice routines: a Cody-Waite range reduction and a polynomial on the FMA pipe, ~40 instructions a
sin+cos pair on their fast path (15 fma.rn among them); the Payne-Hanek slow path for huge arguments, with its
local-memory table, is never taken here: |k·x| <= 64·pi).
Fix (v1): s1, c1 = sin(x), cos(x) once (the same libdevice calls), then for every harmonic (s, c) ← (s·c1 +
c·s1, c·c1 − s·s1): 4 FP32 operations a harmonic instead of a sine and a cosine; the same coefficients, loop and
launch.

Model: x read once and y written once (bytes 2·itemsize·N + 8·K = 67 MB at the defaults); the work counted as
the series' multiply-adds, 2 FMAs a harmonic (flops 4·K·N = 2.1e9).

Expected on an H100 SXM (per design): v0 2^23 points · 64 · ~60 FP32 instructions (sinf + cosf with their
shared range reduction, the coefficient FMAs) ≈ 3.2e10 lane operations / (128 lanes · 132 SMs · 1.755 GHz)
≈ 1.1 ms; v1 ~64 · 6 = 384 operations a point ≈ 0.14 ms (the 67 MB ~20 µs): ~8x. v0's limiter is the FMA pipe
(resource "fma"); the fix removes work the result does not need (cause "move_work"). Near the "precise
transcendentals" class (a precise sinf where an approximate one would do): here the functions are not
approximated, they are not called: the recurrence replaces 126 of the 128 calls.
Tolerance: the recurrence's rounding grows ~linearly with k (64 rotations): fp32 2e-5 relative (norm), fp16
output 2e-3.
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench, L2 flushed) v0 1045 µs (72 registers, 10
spilled: the libdevice slow path's local table), v1 189 µs (56 registers, 8 spilled, the same once-per-point
sinf/cosf): 5.5x; recorded event medians v0 1580 µs, v1 282 µs (+460 %).
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import math

    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    x = ((torch.rand(p["N"], generator=g, device=device, dtype=torch.float32) * 2 - 1) * math.pi).to(dt)
    k = torch.arange(1, p["K"] + 1, device=device, dtype=torch.float32)
    a = torch.randn(p["K"], generator=g, device=device, dtype=torch.float32) / k
    b = torch.randn(p["K"], generator=g, device=device, dtype=torch.float32) / k
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "a": a, "b": b, "out": torch.full((p["N"],), float("nan"), device=device, dtype=dt)}


def _reference(inputs, p):
    import torch

    x = inputs["x"].double()
    k = torch.arange(1, p["K"] + 1, device=x.device, dtype=torch.float64)
    kx = x[:, None] * k[None, :]
    y = torch.sin(kx) @ inputs["a"].double() + torch.cos(kx) @ inputs["b"].double()
    return y.to(inputs["x"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(2 * p.itemsize * p["N"] + 8 * p["K"])


_STAGE = StageModel("series", flops=lambda p: float(4 * p["K"] * p["N"]), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_fourier_terms",
    description="Calibration (held back, set 9; planted: a sine and a cosine per harmonic): a 64-term Fourier "
    "series at 2^23 points; v0 tl.sin/tl.cos of k·x for every k, v1 the angle-addition recurrence",
    params=(
        Param("N", 1 << 23, min=1, max=1 << 28, doc="points"),
        Param("K", 64, min=1, max=1024, doc="harmonics"),
        Param("dtype", "float32", choices=("float32", "float16"), doc="points' and output's dtype"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: tl.sin and tl.cos of k·x for every harmonic", (_STAGE,), _build("v0")),
        Version(
            "v1",
            "fix: sin(x), cos(x) once, the harmonics by the angle-addition rotation",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 2e-5 if dtype == "float32" else 2e-3,
)
