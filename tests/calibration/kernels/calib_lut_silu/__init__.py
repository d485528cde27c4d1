"""Calibration pair (twenty-ninth held-back set) — an activation (SiLU, x * sigmoid(x)) evaluated by linear
interpolation in a 4097-entry fp32 table (a lookup-table activation ported from fixed-point / DSP / CPU
inference code, where a table beats computing), two gathers an element from a 16 KB table that sits in L1,
where computing x * sigmoid(x) in registers (one exponential, one division) gives the same values to the
table's interpolation error (~1e-6). Sources: the CUDA C++ Best Practices Guide ("Memory Optimizations": the
best optimisation may be to avoid the data transfer by recomputing the data when it is needed; "Arithmetic
Instructions"); the CUDA C++ Programming Guide (the arithmetic-instruction throughput table against the L1's
gather throughput: a warp's load whose 32 addresses fall on many cache lines is split into one request a line);
Elfwing, Uchibe & Doya, "Sigmoid-Weighted Linear Units" (2018) (SiLU).

The work: y [N] fp16 = SiLU(x) for x [N] fp16 (N = 2^26, x ~ 2 randn).

Planted problem (v0): stage "silu_lut": u = (clamp(x, -8, 8) + 8) * 256, j = min(floor(u), 4095), y = T[j] +
(u - j) (T[j + 1] - T[j]) with T [4097] fp32 the SiLU at -8 + j / 256 (built once, outside the timed step);
x > 8 gives x, x < -8 gives 0. Two gathers an element into the table, the 32 lanes of a warp on ~20-30 distinct
128-byte lines (x spread over ~3000 entries): each gather instruction split into one L1 request a line, the
L1 (LSU / tag) throughput the limiter, ~1-2 SM cycles an element where the streaming bytes need ~0.25.
Fix (v1): stage "silu": y = x * sigmoid(x) in fp32 (an exponential and a division an element, ~15
instructions): memory-bound on x's read and y's write.

Model (the needed work, for both): 4 FLOPs an element; bytes: x read and y written once (4 B an element,
~268 MB).

Expected on an H100/H200 (per design): v1 ~70-80 us (268 MB at ~3.5-3.9 TB/s); v0 ~250-500 us (the two
gathers' L1 requests): ~3-6x. Cause "move_work" (the needed values by a costlier method: table gathers through
L1 where the arithmetic serves), resource "l1".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    gen = torch.Generator(device="cpu").manual_seed(0)
    x = 2.0 * torch.randn(p["N"], generator=gen)
    x[::101] = 9.0  # beyond the table: the identity branch
    x[1::103] = -8.5  # below the table: the zero branch
    t = -8.0 + torch.arange(4097, dtype=torch.float64) / 256.0
    return {
        "X": x.to(torch.float16).to(device),
        "TABLE": (t * torch.sigmoid(t)).float().to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((p["N"],), float("nan"), device=device, dtype=torch.float16),
    }


def _reference(inputs, p):
    import torch

    x = inputs["X"].double()
    return (x * torch.sigmoid(x)).to(torch.float16)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 4.0 * p["N"]


def _bytes(p):
    return 4.0 * p["N"]


KERNEL = KernelPackage(
    name="calib_lut_silu",
    description="Calibration (held back, set 29; planted: an activation evaluated by linear interpolation in a "
    "4097-entry table, two gathers an element, where computing it serves): y = SiLU(x) for 2^26 fp16 values; "
    "v0 the table interpolation, v1 x * sigmoid(x) computed",
    params=(
        Param("N", 1 << 26, min=1, max=1 << 29, doc="elements"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: SiLU by linear interpolation in a 4097-entry fp32 table (two gathers an element)",
            (StageModel("silu_lut", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: x * sigmoid(x) computed in registers",
            (StageModel("silu", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 2e-3,
)
