"""Calibration pair (sixth held-back set) — decode attention that reads a static KV cache to its
capacity: every program streams all CAP slots of its head and masks the unfilled ones, though each
sequence has filled about a quarter (Nsight Compute's memory workload analysis: DRAM bytes far above what
the work needs; CUDA C++ Best Practices Guide, "Minimize data transfer": do not move bytes whose values
cannot change the result).

The work: one decode step of multi-head attention, B = 32 sequences, H = 32 heads of D = 128, bf16 (fp16
and fp32 allowed for the CPU interpreter), over a preallocated (static) KV cache of CAP = 4096 slots per
sequence, of which sequence b has filled lens[b] (768..1279, mean ~1024; the slots past it zero, as the
cache was allocated); out[b, h] = softmax(q k^T / sqrt(D)) v over the filled slots. One program of 4
warps per (sequence, head), 128 slots per step, an online softmax in fp32 (128, not the 64 first written:
the first quick check, before recording, found both versions at 64 slots streaming at ~1.68 TB/s, half the
H100's peak; at 128 v0 streams at ~2.6 TB/s, nearer the limiter its design names).

Planted problem (v0): written for CUDA-graph capture (the launch must not depend on the lengths): the
loop runs over all CAP slots and the scores at t >= lens[b] are set to -inf, so each program loads its
head's whole cache slice, 2·4096·128·2 B = 2 MB, ~4x the filled part (the masked slots' probabilities are
exactly 0: the result is right).
Fix (v1): the loop's bound is the sequence's length, read in the kernel (still capture-safe: nothing on
the host changes); the mask stays for the last, partial block.

Model: the filled slots' keys and values read once, q read and out written once (bytes
2·(2·H·D·Σ lens + 2·B·H·D) = 0.54 GB at the defaults), 4·H·D·Σ lens FLOPs (q·k and p·v).

Expected on an H100 SXM (per design): v0 streams 2.15 GB → ~0.7 ms; v1 ~0.54 GB → ~0.2 ms (lengths vary by
±25 %, the programs of the longest sequences finish last): ≈ 3-3.5x. Quick check before recording (H100,
do_bench): v0 825 µs (2.6 TB/s of the bytes it streams), v1 296 µs (1.8 TB/s): 2.8x. v0's limiter is the DRAM (resource
"dram"): bytes ~4x the model's, which the fix removes (cause "over_fetch").
Tolerance: bf16 output of an fp32 softmax: 1e-2 relative.
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): recorded event medians v0 932 µs (2.3 TB/s of the bytes it
streams), v1 352 µs (1.5 TB/s of the model's): +165 %.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def lengths(p):
    """The filled lengths, a deterministic spread of ±25 % around LEN (at most CAP, at least 1)."""
    base, span = p["LEN"] - p["LEN"] // 4, p["LEN"] // 2
    return [max(1, min(p["CAP"], base + (b * 97) % max(1, span))) for b in range(p["B"])]


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    b, h, d, cap = p["B"], p["H"], p["D"], p["CAP"]
    if d & (d - 1) or d < 16:
        raise ValueError(f"D={d} must be a power of two >= 16")
    lens = torch.tensor(lengths(p), dtype=torch.int32, device=device)
    q = torch.randn(b, h, d, generator=g, device=device, dtype=torch.float32).to(dt)
    k = torch.zeros(b, h, cap, d, device=device, dtype=dt)
    v = torch.zeros(b, h, cap, d, device=device, dtype=dt)
    for i, n in enumerate(lengths(p)):  # the filled prefix of each sequence's cache
        k[i, :, :n] = torch.randn(h, n, d, generator=g, device=device, dtype=torch.float32).to(dt)
        v[i, :, :n] = torch.randn(h, n, d, generator=g, device=device, dtype=torch.float32).to(dt)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    out = torch.full((b, h, d), float("nan"), device=device, dtype=dt)
    return {"q": q, "k": k, "v": v, "lens": lens, "out": out}


def _reference(inputs, p):
    import torch

    q, k, v = inputs["q"].double(), inputs["k"].double(), inputs["v"].double()
    outs = []
    for i, n in enumerate(lengths(p)):
        s = torch.einsum("hd,htd->ht", q[i], k[i, :, :n]) / p["D"] ** 0.5
        outs.append(torch.einsum("ht,htd->hd", s.softmax(dim=-1), v[i, :, :n]))
    return torch.stack(outs).to(inputs["out"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    filled = sum(lengths(p))
    return float(p.itemsize * (2 * p["H"] * p["D"] * filled + 2 * p["B"] * p["H"] * p["D"]) + 4 * p["B"])


def _memory(p):
    return float(p.itemsize * (2 * p["B"] * p["H"] * p["CAP"] * p["D"] + 2 * p["B"] * p["H"] * p["D"]))


_STAGE = StageModel("decode_attention", flops=lambda p: 4.0 * p["H"] * p["D"] * sum(lengths(p)), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_cache_capacity",
    description="Calibration (held back, set 6; planted: decode attention reading a static KV cache to its "
    "capacity, unfilled slots masked): one query per (sequence, head) over lens[b] of CAP slots, bf16; v0 loop "
    "over CAP, v1 loop over lens[b]",
    params=(
        Param("B", 32, min=1, max=1 << 12, doc="sequences"),
        Param("H", 32, min=1, max=1 << 10, doc="heads"),
        Param("D", 128, min=16, max=256, doc="head dimension (a power of two)"),
        Param("CAP", 4096, min=1, max=1 << 20, doc="cache slots per sequence (allocated length)"),
        Param("LEN", 1024, min=1, max=1 << 20, doc="mean filled length (lengths spread ±25 %)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the loop over all CAP cache slots, scores past the length masked to -inf",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the loop bounded by the sequence's length (read in the kernel)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_memory,
    tolerance=lambda dtype: 1e-2 if dtype == "bfloat16" else 2e-3,
)
