"""Calibration pair (twelfth held-back set) — a rare slow path evaluated for every element: a two-path
special function (a cheap polynomial for |x| < T, a long series for the rare tail elements |x| >= T) written
as ``tl.where(tail, slow(x), fast(x))``: Triton evaluates both operands of ``tl.where`` for the whole tile, as
a SIMT warp runs both sides of a divergent branch, so every element pays the series that 0.9 % of them need
(CUDA C++ Best Practices Guide, "Branching and Divergence": avoid different execution paths within a warp;
the CUDA C++ Programming Guide, "SIMT Architecture": a divergent warp executes each taken path; the standard
cure, regrouping the work by path before the costly branch: stream compaction, as in Laine, Karras and Aila,
"Megakernels Considered Harmful: Wavefront Path Tracing on GPUs", HPG 2013).

The work: out[i] = f(x[i]) for N = 2^24 values x ~ N(0, 1) (fp32; fp16 allowed), where
    f(x) = x (1 + x^2 (c1 + x^2 c2))                 for |x| < T = 2.625 (99.13 % of the values),
    f(x) = x / L · sum_{k < L} s^k, s = x^2 / (1 + x^2)  for |x| >= T (0.87 %, L = 512 terms, an FMA
                                                          recurrence acc = acc·s + 1 evaluated term by term).
One program of 4 warps per BLOCK = 1024 values.

Planted problem (v0): y = tl.where(|x| >= T, slow(x), fast(x)): the 512-step series run for all 2^24 values
(8.6 G FMAs), of which 0.87 % are kept.
Fix (v1): the same program computes fast(x) for its tile and stores it where |x| < T; it writes the
indices of its tail values (an exclusive ``tl.cumsum`` of the tail mask gives each its slot) to a scratch
list, and after a barrier runs the series only on those, 32 at a time (about 9 a program): the series
runs on ~1 % of the values; one kernel, the same formulas.

Model: x read once, out written once (bytes 2·N·itemsize = 134 MB at fp32); FLOPs the fast path for
every value (8) plus the series for the tail values (2·L for the expected 0.87 %).

Expected on an H100 SXM (per design): v0 8.6 G FMAs at ~30 T FMA/s (132 SMs x 128 lanes x ~1.75 GHz)
≈ 0.29 ms, FMA-bound; v1 ~134 MB at ~2.5-3 TB/s ≈ 0.05 ms plus the compaction and ~150 K series
(~1.5 % of v0's FMAs): ~0.06 ms: ~4-5x. Cause "divergence" (the work of the path most elements do not take
done by every element); resource "fma" (the series' FMAs are v0's time).
Tolerance: the fp32 series accumulates ~L roundings (relative ~3e-5 at most): 1e-4 for fp32 output, the
fp16 default for fp16 output.
"""

import math

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version, default_tolerance

T = 2.625  # exactly representable in fp16 and fp32: both versions and the reference split at the same values
C1, C2 = -0.1875, 0.0078125
TAIL = math.erfc(T / math.sqrt(2.0))  # the expected fraction of tail values (0.0087)


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    n = p["N"]
    return {
        "x": torch.randn(n, generator=g).to(device=device, dtype=dt),
        # The fix's scratch list of tail indices (one slot per value, a program's slots its own).
        "scratch": torch.zeros(n, dtype=torch.int32, device=device),
        # Poisoned output: NaN wherever a version fails to write shows up in the check.
        "out": torch.full((n,), float("nan"), device=device, dtype=dt),
    }


def _reference(inputs, p):
    import torch

    x = inputs["x"].double()
    x2 = x * x
    fast = x * (1 + x2 * (C1 + x2 * C2))
    s = x2 / (1 + x2)
    slow = x / p["L"] * (1 - s ** p["L"]) / (1 - s)
    return torch.where(x.abs() >= T, slow, fast).to(inputs["x"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(2 * p["N"] * p.itemsize)


def _flops(p):
    return float(p["N"] * 8 + TAIL * p["N"] * 2 * p["L"])


_STAGE = StageModel("two_path", flops=_flops, bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_rare_branch",
    description="Calibration (held back, set 12; planted: a rare slow path evaluated for every element): "
    "out = f(x), a cheap polynomial for |x| < 2.625, a 512-term series for the 0.87 % tail; v0 "
    "tl.where(tail, series, polynomial) (the series for every value), v1 the tail values compacted per "
    "program and the series run on them only",
    params=(
        Param("N", 1 << 24, min=1, max=1 << 28, doc="values"),
        Param("L", 512, min=1, max=1 << 16, doc="terms of the tail's series"),
        Param("dtype", "float32", choices=("float32", "float16"), doc="x and out dtype"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: tl.where(tail, series, polynomial): the series for every value",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: tail values compacted per program, the series run on them only",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=lambda p: float(p["N"] * (2 * p.itemsize + 4)),
    tolerance=lambda dtype: 1e-4 if dtype == "float32" else default_tolerance(dtype),
)
