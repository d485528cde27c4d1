"""Calibration pair (ninth held-back set) — a 256-entry lookup table gathered through ``.cg`` loads (cache
global: past L1, at the L2) because the kernel's author marked every load "streamed once": the 1 KB table that
every element of the grid reads is fetched from the L2 at every lookup instead of from the SM's L1 (PTX ISA,
cache operators: ld.cg caches in L2 only; CUDA C++ Best Practices Guide, memory optimizations: keep data that
is reused close to the SM; Nsight Compute's memory workload analysis: L1 hit rate 0 on the table, L2 requests
per element above the streamed bytes').

The work: blockwise 8-bit dequantisation (bitsandbytes' dynamic/NF8-style codes): out[i] = code[q[i]] ·
absmax[i // 256], q uint8 (N = 2^27 values), code a 256-entry float32 table, absmax float32 per block of 256, out
bf16 (fp16 allowed for the CPU interpreter). One program of 4 warps per BLOCK = 2048 values (16 per thread).

Planted problem (v0): every load written with cache_modifier=".cg" (right for q and absmax, read once): the
table gather too: ld.global.cg.b32 per element, 32 random lanes of a warp over the table's 32 sectors (8
lines), every SM's lookups served by the few L2 slices that hold those 8 lines.
Fix (v1): the table gathered with the default cache operator (ld.global, L1-resident after its first misses); q
and absmax still ".cg". The same grid, warps and math.

Model: q read, out written, absmax and the table read once (bytes N + 2·N + 4·N/256 + 1 KB = 405 MB at the
defaults); no FLOPs counted (a multiply an element).

Expected on an H100 SXM (per design): v1 405 MB → ~0.14 ms (the L1 gathers ~8 wavefronts a warp, ~0.25 cycle an
element an SM, under the DRAM time); v0 ~20 distinct sectors a warp's lookup → ~0.6 L2 sectors (20 B) an element,
2.7 GB of L2 load traffic on 8 hot lines: far above the DRAM bytes and concentrated on a few slices: ~3x and
more. v0's limiter is the L2 (resource "l2"); the fix keeps reused bytes in L1 (cause "over_fetch": L2 bytes
~6x the model's). Near the "K/V of a head group re-read by every query head" class (re-reads served by L2):
there the program structure re-reads, here a cache operator sends a reused table past L1.
Tolerance: the product of two fp32 values rounded once to bf16/fp16: exact in both versions (0).
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench, L2 flushed) v0 6260 µs (65 GB/s of the
model's bytes: 16 ld.global.cg.b32 table lookups a thread, far past the design's ~3x), v1 165 µs (2.45 TB/s): 37.9x;
recorded event medians v0 7351 µs, v1 183 µs (+3920 %).
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version

QBLOCK = 256  # values per absmax block


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    n = p["N"]
    # A signed, roughly normal code table (sorted, as the dynamic-quantisation maps are), random codes.
    code = torch.randn(256, generator=g, device=device, dtype=torch.float32).sort().values / 3
    q = torch.randint(0, 256, (n,), generator=g, device=device, dtype=torch.uint8)
    absmax = torch.rand((n + QBLOCK - 1) // QBLOCK, generator=g, device=device, dtype=torch.float32) + 0.5
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {
        "q": q,
        "code": code,
        "absmax": absmax,
        "out": torch.full((n,), float("nan"), device=device, dtype=dt),
    }


def _reference(inputs, p):
    q, code, absmax = inputs["q"], inputs["code"], inputs["absmax"]
    scale = absmax.repeat_interleave(QBLOCK)[: q.numel()]
    return (code[q.long()] * scale).to(inputs["out"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    n = p["N"]
    return float(n + p.itemsize * n + 4 * ((n + QBLOCK - 1) // QBLOCK) + 4 * 256)


_STAGE = StageModel("dequant", flops=lambda p: 0.0, bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_lut_bypass",
    description="Calibration (held back, set 9; planted: a reused lookup table loaded past L1): blockwise 8-bit "
    "dequantisation code[q] * absmax of 2^27 values; v0 the 1 KB table gathered with .cg loads, v1 through L1",
    params=(
        Param("N", 1 << 27, min=1, max=1 << 30, doc="8-bit codes"),
        Param("dtype", "bfloat16", choices=("bfloat16", "float16"), doc="output dtype"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the table gathered with .cg (past L1) like the streamed loads",
            (_STAGE,),
            _build("v0"),
        ),
        Version("v1", "fix: the table gathered through L1 (default cache operator)", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
