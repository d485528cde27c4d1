"""Calibration pair (eighth held-back set) — grouped-query decode attention with one program per query head:
the G query heads that share a KV head each stream that head's keys and values, so every K/V byte is read G
times, once from DRAM and G - 1 times from L2 (Nsight Compute's memory workload analysis: L2 bytes far above
the DRAM bytes and the model's; CUDA C++ Best Practices Guide, "Memory optimizations": data used by several
outputs is loaded once and reused from on-chip storage, not fetched again by each block).

The work: one decode step of grouped-query attention (GQA), B = 64 sequences, HKV = 8 KV heads of D = 128
shared by G = 8 query heads each (64 query heads), S = 2048 cached tokens, bf16 (fp16/fp32 allowed for the CPU
interpreter); out[b, h] = softmax(q[b, h] k[b, h // G]^T / sqrt(D)) v[b, h // G]. An online softmax in fp32,
BLOCK_T = 64 tokens a step, 4 warps a program; the scores and the weighted sum by tl.dot (bf16 MMAs, fp32
accumulation) over a query tile of 16 rows (tl.dot's smallest M), the rows past the program's heads zero.

Planted problem (v0): HEADS = 1 query head per program, grid B·HKV·G = 4096, the G programs of a group
adjacent in launch order (they run together: their reads of the shared K/V after the first hit L2): L2
traffic G·2·B·HKV·S·D·2 = 4.3 GB for 0.54 GB of K/V.
Fix (v1): HEADS = G = 8 query heads per program (the same code with a [G, D] query tile), grid B·HKV = 512:
each K/V tile loaded once and used by the 8 heads.

Model: K and V read once, q read and out written once (bytes 2·B·HKV·S·D·2 + 2·B·HKV·G·D·2 = 0.54 GB at the
defaults); 4·B·HKV·G·S·D FLOPs (q·k and p·v; 8.6e9).

Expected on an H100 SXM (per design): v1 0.54 GB → ~0.2-0.25 ms (DRAM); v0 4.3 GB through L2 at ~5.5-7 TB/s
→ ~0.65-0.8 ms: ~3x (the MMAs, 16 rows for 1 or 8 heads, and the exponentials far from their pipes' peaks).
v0's limiter is the L2 (resource "l2": bytes ~8x the model's served by L2, DRAM near the model); the fix
removes the re-reads (cause "over_fetch").
Tolerance: bf16 output of an fp32 softmax (the probabilities rounded to bf16 for the second MMA): 1e-2 relative.

First design (quick check, H100, 2026-11-26 ~16:00 UTC): the same kernel with the products as broadcast
multiplies summed by tl.sum over [HEADS, 16, 128] tiles (8 warps, no tl.dot): both versions bound by the
reductions' shuffles, not by memory: v0 2459 µs (the 4.3 GB it streams at 1.75 TB/s), v1 3324 µs (357
shuffles and 140 registers against 56 and 48): the fix slower (0.74x). Redesigned with tl.dot (both versions;
cause and resource unchanged) before recording.
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): quick check of the tl.dot design (do_bench, L2 flushed) v0
537 µs (the 4.3 GB it streams at 8.0 TB/s; mma.sync, 80 registers), v1 208 µs (2.6 TB/s of the model's bytes):
2.58x; recorded event medians v0 742 µs, v1 223 µs (+233 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    b, hkv, grp, s, d = p["B"], p["HKV"], p["G"], p["S"], p["D"]
    q = torch.randn(b, hkv * grp, d, generator=g, device=device, dtype=torch.float32).to(dt)
    k = torch.randn(b, hkv, s, d, generator=g, device=device, dtype=torch.float32).to(dt)
    v = torch.randn(b, hkv, s, d, generator=g, device=device, dtype=torch.float32).to(dt)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    out = torch.full((b, hkv * grp, d), float("nan"), device=device, dtype=dt)
    return {"q": q, "k": k, "v": v, "out": out}


def _reference(inputs, p):
    import torch

    b, hkv, grp, d = p["B"], p["HKV"], p["G"], p["D"]
    q = inputs["q"].double().view(b, hkv, grp, d)
    k, v = inputs["k"].double(), inputs["v"].double()
    s = torch.einsum("bkgd,bksd->bkgs", q, k) / d**0.5
    o = torch.einsum("bkgs,bksd->bkgd", s.softmax(dim=-1), v)
    return o.reshape(b, hkv * grp, d).to(inputs["out"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    b, hkv, grp, s, d = p["B"], p["HKV"], p["G"], p["S"], p["D"]
    return float(p.itemsize * (2 * b * hkv * s * d + 2 * b * hkv * grp * d))


_STAGE = StageModel(
    "decode_attention", flops=lambda p: 4.0 * p["B"] * p["HKV"] * p["G"] * p["S"] * p["D"], bytes=_bytes
)

KERNEL = KernelPackage(
    name="calib_gqa_decode",
    description="Calibration (held back, set 8; planted: the K/V of a query-head group re-read by every head): "
    "GQA decode attention, 8 query heads a KV head, bf16; v0 a program per query head, v1 a program per KV head",
    params=(
        Param("B", 64, min=1, max=1 << 12, doc="sequences"),
        Param("HKV", 8, min=1, max=256, doc="KV heads"),
        Param("G", 8, min=1, max=16, doc="query heads per KV head (a power of two)"),
        Param("S", 2048, min=1, max=1 << 20, doc="cached tokens per sequence"),
        Param("D", 128, min=16, max=256, doc="head dimension (a power of two)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: a program per query head (each of the G heads of a group streams the shared K/V)",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: a program per KV head, its G query heads computed from one read of K/V",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-2 if dtype == "bfloat16" else 2e-3,
)
