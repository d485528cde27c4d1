"""Calibration pair (tenth held-back set) — the output read back only to be multiplied by beta = 0: a kernel
written in the general BLAS form C = alpha·x·yᵀ + beta·C (a rank-1 update, BLAS ``ger``) and called with
beta = 0 to build a fresh matrix, so it loads every element of C it is about to overwrite (CUDA C++ Best
Practices Guide, "Minimize data transfer"; the BLAS convention that beta = 0 means C need not be read, which
tuned libraries honour with a beta = 0 specialisation).

The work: C = alpha · x yᵀ for x of M = 16384 and y of N = 16384 values, alpha = 0.5 (fp16; fp32 allowed): an
outer product, e.g. a rank-1 bias or a rank-1 weight update built into a fresh buffer (C given zeroed). One
program of 4 warps per 64 x 128 tile of C.

Planted problem (v0): the general kernel: c = load(C tile); C = alpha·x yᵀ + beta·c with beta = 0.0 passed at
run time: 2 bytes read for every 2 bytes written, DRAM traffic 2x the model's (dead reads: the values loaded
are multiplied by zero).
Fix (v1): the same kernel specialised for beta = 0 (READ_C=False): C written, never read.

Model: x and y read once, C written once (bytes M·N·itemsize + (M + N)·itemsize = 537 MB at the defaults);
FLOPs 2·M·N (alpha·x, then the product).

Expected on an H100 SXM (per design): v1 ~537 MB of stores at ~2.8-3 TB/s ≈ 0.18-0.2 ms; v0 ~1.07 GB (a read
and a write of C) ≈ 0.36-0.4 ms: ~2x. v0 is DRAM-bound (resource "dram") on bytes the result does not need
(cause "over_fetch": the traffic of C read for nothing).
Tolerance: fp32 arithmetic rounded once to the output type: the dtype's default.
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version, default_tolerance

ALPHA = 0.5


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    x = torch.randn(p["M"], generator=g).to(device=device, dtype=dt)
    y = torch.randn(p["N"], generator=g).to(device=device, dtype=dt)
    # C is given zeroed, as the caller of a beta = 0 update allocates it (a version that fails to write
    # leaves zeros, which the reference, non-zero almost everywhere, does not match).
    return {"x": x, "y": y, "out": torch.zeros(p["M"], p["N"], device=device, dtype=dt)}


def _reference(inputs, p):
    x, y = inputs["x"].float(), inputs["y"].float()
    return ((ALPHA * x)[:, None] * y[None, :]).to(inputs["out"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(p["M"] * p["N"] * p.itemsize + (p["M"] + p["N"]) * p.itemsize)


_STAGE = StageModel("outer", flops=lambda p: float(2 * p["M"] * p["N"]), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_beta_zero",
    description="Calibration (held back, set 10; planted: the output read back to be multiplied by beta = 0): "
    "C = alpha x y^T + beta C with beta = 0; v0 the general kernel (C loaded), v1 its beta = 0 "
    "specialisation (C written only)",
    params=(
        Param("M", 16384, min=1, max=1 << 17, doc="rows (length of x)"),
        Param("N", 16384, min=1, max=1 << 17, doc="columns (length of y)"),
        Param("dtype", "float16", choices=("float16", "float32"), doc="x, y and C dtype"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0", "planted: the general form, C loaded and multiplied by beta = 0", (_STAGE,), _build("v0")
        ),
        Version("v1", "fix: the beta = 0 specialisation, C only written", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=default_tolerance,
)
