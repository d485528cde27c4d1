"""Calibration pair (fourth held-back set) — a reduction split in two kernels with its elementwise
step's full-size fp32 result written to DRAM and read back (Nsight Compute's memory workload
analysis: DRAM bytes far above the inputs' and outputs' footprint; CUDA C++ Best Practices Guide,
"Minimize data transfer": keep intermediate results on chip, fuse the producer into its consumer).

The work: the per-row RMS of an activation matrix, rms[m] = sqrt(mean_n x[m, n]^2) (RMSNorm's
statistics, per-sample gradient norms), for X [M, N] bf16 (fp16 allowed for the CPU interpreter),
M = 16384 rows of N = 8192, fp32 result [M]: 268 MB of input at the defaults.

Planted problem (v0): written as a map then a reduce, two Triton kernels: ``x.float() ** 2`` into a
full-size fp32 buffer [M, N] (a 536 MB intermediate), then the per-row sum over that buffer. Per
element: 2 bytes read, 4 written, 4 read again: 10 bytes where 2 suffice (DRAM bytes ~5x the model).
Fix (v1): the same reduction kernel reading X directly and squaring in registers (the map fused
into the reduce): one kernel, each element read once.

Model: X read once and rms written once (bytes 2·M·N + 4·M = 268 MB at the defaults), a multiply
and an add per element (2·M·N FLOPs).

Expected on an H100 SXM (per design): v1 streams 268 MB at ~3 TB/s → ~90-100 µs; v0 moves ~1.34 GB
in two memory-bound kernels → ~450-500 µs: ≈ 5x. v0's limiter is DRAM (resource "dram"); its bytes
above the model are the intermediate's round trip between the stage's two kernels (cause "fusion").
Tolerance: fp32 sums of 8192 squares: 1e-5 relative.
Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 469 µs,
v1 99 µs (4.7x); recorded event medians v0 470 µs, v1 97 µs (+385 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    m, n = p["M"], p["N"]
    scale = 0.5 + torch.rand(m, 1, generator=g, device=device, dtype=torch.float32)  # rows differ
    x = (torch.randn(m, n, generator=g, device=device, dtype=torch.float32) * scale).to(dt)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "rms": torch.full((m,), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    x = inputs["x"].double()
    return x.square().mean(dim=1).sqrt().float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(p["M"] * p["N"] * p.itemsize + 4 * p["M"])


_STAGE = StageModel("row_rms", flops=lambda p: 2.0 * p["M"] * p["N"], bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_square_roundtrip",
    description="Calibration (held back, set 4; planted: a full-size fp32 intermediate written and read back "
    "between a map and its reduction): per-row RMS of a bf16 matrix; v0 squares into an fp32 buffer then sums "
    "it, v1 squares in registers inside the reduction",
    params=(
        Param("M", 16384, min=1, max=1 << 20, doc="rows"),
        Param("N", 8192, min=1, max=1 << 16, doc="columns (elements per row)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: x.float()**2 written to a full-size fp32 buffer, then a second kernel sums its rows",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: one kernel, the squares computed in registers inside the row reduction",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-5,
)
