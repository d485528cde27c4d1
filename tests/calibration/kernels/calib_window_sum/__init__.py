"""Calibration pair (sixth held-back set) — a moving-window sum computed by re-reading the whole window
for every output: each sample loaded W times from global memory, W - 1 of them hits in L1 (Nsight
Compute's memory workload analysis: L1/TEX traffic far above the DRAM bytes, one L1 wavefront or two per
scalar request; CUDA C++ Best Practices Guide, "Memory optimizations": reuse data on chip, do not fetch the
same bytes again).

The work: a causal rolling sum over the last W = 64 samples of each channel, y[r, t] = Σ_{j<W, j<=t}
x[r, t - j] (a box filter, the numerator of a rolling mean or energy), over R = 16384 channels of T = 4096
float32 samples; one program of 8 warps per channel (the whole row, 16 samples per thread).

Planted problem (v0): the direct form, ``for j in range(W): acc += load(x + t - j)``: 64 shifted,
masked loads per output, every one misaligned by j samples (scalar 4-byte loads, a warp's 128 bytes
straddling two L1 lines), 63 of them re-reading what the program loaded before: 64x the model's bytes
through L1 (~17 GB at the defaults) while DRAM moves the row once.
Fix (v1): the running sum: each sample enters the window once and leaves it once, y = cumsum(x[t] -
x[t - W]) (two loads per output, one tl.cumsum over the row); nothing else changes (one program per
row, 8 warps).

Model: x read once, y written once (bytes 2·4·R·T = 537 MB at the defaults), 2 FLOPs per output (the
entering minus the leaving sample, the running add: 2·R·T).

Expected on an H100 SXM (per design): v0 64 x 16384 x 4096 / 32 = 134 M warp loads, ~1 M per SM at ~2 L1
wavefronts each → ~1 ms; v1 streams 537 MB → ~0.2 ms: ≈ 4-5x. v0's limiter is the L1 (resource "l1"):
its traffic far above the model's bytes, which the fix removes (cause "over_fetch", at the L1; DRAM
bytes stay near the model).
Tolerance: float32 running sums over 4096 samples: 1e-4 relative (v1 sums in another order than v0).
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 2093 µs (a
runtime loop of 16 scalar ld.global.b32 per thread per shift, no vector loads, 40 registers), v1 183 µs (2.9 TB/s;
8 ld.global.v4): 11.4x; recorded event medians v0 3167 µs, v1 184 µs (+1620 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    r, t = p["R"], p["T"]
    x = torch.randn(r, t, generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "y": torch.full((r, t), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    import torch

    x = inputs["x"].double()
    c = torch.nn.functional.pad(x.cumsum(dim=1), (1, 0))  # c[:, i] = sum of x[:, :i]
    t, w = x.shape[1], p["W"]
    hi = torch.arange(1, t + 1, device=x.device)
    lo = (hi - w).clamp(min=0)
    return (c[:, hi] - c[:, lo]).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(2 * 4 * p["R"] * p["T"])


_STAGE = StageModel("window_sum", flops=lambda p: 2.0 * p["R"] * p["T"], bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_window_sum",
    description="Calibration (held back, set 6; planted: a rolling window sum re-reading the window for every "
    "output): y[r, t] = sum of x[r, t-W+1..t], float32; v0 W shifted loads per output, v1 running sum (cumsum "
    "of entering minus leaving samples)",
    params=(
        Param("R", 16384, min=1, max=1 << 24, doc="rows (channels)"),
        Param("T", 4096, min=1, max=8192, doc="samples per row (one program holds a row)"),
        Param("W", 64, min=1, max=1024, doc="window length"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: W shifted loads per output (the window re-read from L1 for every sample)",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: running sum, cumsum(x[t] - x[t - W]) (two loads per output)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
