"""Calibration pair (thirty-eighth held-back set) — sums of sinusoids of large arguments (phases w_k t of raw
timestamps, |x| >= 1.5e5) evaluated with libdevice's sinf, whose argument reduction takes its slow path (the
Payne-Hanek reduction: the argument's bits multiplied into a 192-bit table of 2/pi, a loop of six 32 x 32-bit
integer products a call) for every |x| > 105615, where a two-constant Cody-Waite reduction by 2 pi with fused
multiply-adds (four instructions) brings every argument into [-pi, pi] first and sinf's fast path serves.
Sources: the CUDA C++ Best Practices Guide, "Math Libraries" (the trigonometric functions' two code paths: "the
slow path ... is used for arguments large in magnitude ... lengthy computations", an order of magnitude slower);
the CUDA C++ Programming Guide, Mathematical Functions (sinf's accuracy for all arguments); M. Payne and R.
Hanek, "Radian reduction for trigonometric functions" (SIGNUM Newsletter 18, 1983); W. J. Cody and W. Waite,
"Software Manual for the Elementary Functions" (1980); J.-M. Muller, "Elementary Functions" (2016, ch. 11:
range reduction); M. Tancik et al., "Fourier Features Let Networks Learn High Frequency Functions" (NeurIPS
2020) and time2vec-style features of raw timestamps (the large phases).

The work: y [N] fp32 = sum over k < K of a_k sin(x_nk), x_nk = fl32(t_n w_k) (the fp32 product, the same in both
versions and in the reference), t_n in [1.5e5, 1e6), w_k in [1, 3): every |x| in [1.5e5, 3e6), past libdevice's
fast-path bound 105615.

Planted problem (v0): stage "sin_payne_hanek": libdevice.sin(x) per term: the fast path's reduction, then
the slow path (its compiled loop of six table loads and integer multiply-adds, the shifts, the conversion of the
64-bit result): ~245 SASS instructions a term (static count of Triton 3.9's sm_90 build, the loop counted six
times), mostly IMAD, ISETP, SHF, LOP3.
Fix (v1): stage "sin_cody_waite": q = rint(x / 2 pi), r = fma(-q, C1, x), r = fma(-q, C2, r) with C1 = fl32(2
pi), C2 = fl32(2 pi - C1) (the product q C1 exact inside the fma; |r| <= pi, error ~2e-7 for |q| < 2^19), then
libdevice.sin(r) on its fast path: ~45 instructions a term. The same values to fp32 rounding.

Model (the needed work, for both): FLOPs 2 N K (a product and an accumulation a term; the reduction and the
sine's polynomial are the method's); bytes t read, y written: 8 N (w, a: 8 K, cached).

Expected on an H100/H200 (per design): N = 2^20, K = 32: v0 3.4e7 terms x ~245 instructions = 8.2e9 lane
instructions (2.6e8 warp instructions over 528 schedulers at ~0.6-0.8 issued a cycle): ~0.3-0.45 ms; v1 ~45 a
term: ~60-90 us: ~4-6x. Cause "move_work" (the needed sines by a costlier method: Payne-Hanek's integer
reduction where a cheaper reduction is exact enough for these arguments); resource "issue" (the slow path's
instructions spread over the integer multiply (FMA pipe) and ALU pipes: no one pipe saturates before issue).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    n, k = p["N"], p["K"]
    t = (1.5e5 + 8.5e5 * torch.rand(n, generator=g, dtype=torch.float64)).float()
    w = (1.0 + 2.0 * torch.rand(k, generator=g, dtype=torch.float64)).float()
    a = (torch.rand(k, generator=g, dtype=torch.float64) / k).float()
    return {
        "t": t.to(device),
        "w": w.to(device),
        "a": a.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((n,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    x = inputs["t"][:, None] * inputs["w"][None, :]  # the fp32 products, as both versions form them
    return (x.double().sin() * inputs["a"].double()[None, :]).sum(1).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * p["N"] * p["K"]


def _bytes(p):
    return 8.0 * p["N"] + 8.0 * p["K"]


KERNEL = KernelPackage(
    name="calib_sin_bigarg",
    description="Calibration (held back, set 38; planted: sines of large arguments through libdevice sinf's "
    "Payne-Hanek slow path where a Cody-Waite reduction to [-pi, pi] first serves): 2^20 timestamps, 32 "
    "frequencies; v0 libdevice.sin(x), v1 the reduction then libdevice.sin",
    params=(
        Param("N", 1 << 20, min=1, max=1 << 26, doc="timestamps"),
        Param("K", 32, min=1, max=1024, doc="frequencies (terms a timestamp)"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: libdevice sinf on |x| > 105615 (its Payne-Hanek slow path every term)",
            (StageModel("sin_payne_hanek", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: a two-constant Cody-Waite reduction by 2 pi, then sinf's fast path",
            (StageModel("sin_cody_waite", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
