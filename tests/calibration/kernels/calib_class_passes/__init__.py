"""Calibration pair (third held-back set) — the same input re-read from DRAM once per output: a
per-class reduction parallelised over (chunk, class), so every chunk of the input is streamed once
per class (Nsight Compute's memory workload analysis: DRAM bytes far above the unique footprint;
CUDA C++ Best Practices Guide, "Minimize data transfer" and data reuse: load once, compute every
output that needs the value while it is in registers).

The work: per-class sums of a score map, S[c] = Σ_{i: label_i = c} x_i (the class-wise statistics
of a segmentation map: per-class mean confidence, soft-Dice terms), for N = 2^27 elements with x
bf16 scores in [0, 1) (fp16 allowed for the CPU interpreter) and labels uint8 in 0..C-1 (C = 8):
3 bytes per element, 403 MB at the defaults. Each program writes one partial sum per class for its
16384-element chunk; the partials are added up after the stage (not timed).

Planted problem (v0): the natural 2-d grid (chunks, C), one program per chunk and class (CB = 1),
the chunk index on the fast axis: the C programs reading a chunk are 8192 programs apart (~4 waves
of 2112 resident programs, ~400 MB streamed between them: far beyond the 50 MB L2), so x and the
labels come from DRAM C = 8 times. DRAM bytes ≈ 8x the model.
Fix (v1): one program per chunk for all C classes ([8, 1024] fp32 accumulators, 64 registers per
thread at 4 warps): each element read once, compared with the 8 classes in registers.

Model: x and labels read once (bytes 3·N = 403 MB at the defaults; the 8192x8 partial sums
ignored), one add per element (N FLOPs).

Expected on an H100 SXM (per design): v1 ~3 TB/s → ~135-160 µs (its 8 compare-select-adds per
element, ~27 instructions, ~120 µs of issue, overlap the stream); v0 ~3.2 GB → ~1.1 ms: ≈ 7x. v0's
limiter is DRAM (resource "dram"), its bytes over the model re-reads (cause "over_fetch").
Tolerance: sums of 2^24 positive values per class, fp32 per chunk: 1e-5 relative.
Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 1123 µs,
v1 278 µs (4.0x; v1 slower than the design's 135-160 µs); recorded event medians v0 1195 µs, v1 356 µs
(+236 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

CHUNK = 16384  # elements per program (impl.py)


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    n, c = p["N"], p["C"]
    x = torch.rand(n, generator=g, device=device, dtype=torch.float32).to(dt)
    labels = torch.randint(0, c, (n,), generator=g, device=device, dtype=torch.uint8)
    chunks = -(-n // CHUNK)
    part = torch.full((chunks, c), float("nan"), device=device, dtype=torch.float32)
    return {"x": x, "labels": labels, "part": part}


def _reference(inputs, p):
    import torch

    x, lab = inputs["x"].double(), inputs["labels"].long()
    return torch.zeros(p["C"], dtype=torch.float64, device=x.device).index_add_(0, lab, x).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return 3.0 * p["N"]


_STAGE = StageModel("class_sums", flops=lambda p: float(p["N"]), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_class_passes",
    description="Calibration (held back, set 3; planted: the input re-read once per class): per-class sums of a "
    "bf16 score map over uint8 labels; v0 one program per (chunk, class), v1 one program per chunk for all classes",
    params=(
        Param("N", 1 << 27, min=1, max=1 << 30, doc="elements"),
        Param("C", 8, min=1, max=16, doc="classes"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: grid (chunks, classes), one program per chunk and class: each chunk read once per class",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: one program per chunk computing all classes' sums (each element read once)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-5,
)
