"""Calibration pair (seventh held-back set) — a jagged (variable-length) batch kernel in which every
program finds where its segment starts by summing the lengths of all the segments before it: the same
prefix recomputed by each of the S programs, O(S²) scalar loads and adds for what one prefix sum,
computed once, gives (CUDA C++ Best Practices Guide, "Instruction optimization" and "Execution
configuration": do not repeat in every thread block work whose result is shared; Nsight Compute's
instruction statistics: the issue slots spent on a uniform scalar loop).

The work: mean pooling of S = 16384 segments of lengths 1..511 (mean 256; ~4.2 M tokens) of D = 128 bf16
features, out[s] = mean of x[start_s : start_s + len_s] (fp32 sums, bf16 out); one program of 4 warps per
segment, its rows read in tiles of 64 x 128.

Planted problem (v0): ``start = Σ_{i<s} len[i]``, a runtime loop of s scalar loads and adds in every
program (all 4 warps run it): 134 M iterations in all at the defaults (S²/2), a load, an add, a compare
and a branch each, issued by 4 warps each.
Fix (v1): ``start = offsets[s]``, the offsets (cu_seqlens) computed once with the lengths, as jagged
tensors carry them; nothing else changes (grid, tiles, loads, the pooling).

Model: the features read once, the means written once, the lengths and offsets once (bytes
(T·D + S·D)·2 + 8·S ≈ 1.08 GB at the defaults; T the tokens); FLOPs one add per feature read and a
divide per mean (T·D + S·D).

Expected on an H100 SXM (per design): v1 ~1.08 GB → ~0.4 ms; v0 adds ~134 M iterations x 4 warps x ~4-5
instructions ≈ 2.5 G warp instructions at 4 issues per SM per clock → ~3 ms: ~7x. v0's limiter is the
issue slots (a uniform scalar loop, each warp's loads hitting L1/L2, no single pipe at its peak: resource
"issue"); the fix removes the repeated work (cause "move_work": the work not needed for the result,
computed once outside instead of S times).
Tolerance: bf16 means of fp32 sums: 1e-2 relative (bf16), 2e-3 (fp16), 1e-5 (fp32).
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 2801 µs,
v1 387 µs (2.8 TB/s; 94 and 95 registers): 7.2x; recorded event medians v0 4215 µs, v1 403 µs (+947 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def lengths(p, device="cpu"):
    """The segments' lengths, 1..MAXLEN-1: a fixed draw for the parameters (Python's generator: the
    integrity check's fresh inputs shift torch's seeds, and must keep the shapes)."""
    import random

    import torch

    r = random.Random(1234)
    return torch.tensor([r.randrange(1, p["MAXLEN"]) for _ in range(p["S"])], dtype=torch.int32).to(device)


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    lens = lengths(p, device)  # fixed: fresh inputs (another seed) keep the shapes
    offs = torch.zeros(p["S"] + 1, device=device, dtype=torch.int32)
    offs[1:] = torch.cumsum(lens, 0)
    tokens = int(offs[-1])
    dt = getattr(torch, p["dtype"])
    x = torch.randn(tokens, p["D"], generator=g, device=device, dtype=torch.float32).to(dt)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    out = torch.full((p["S"], p["D"]), float("nan"), device=device, dtype=dt)
    return {"x": x, "lengths": lens, "offsets": offs, "out": out}


def _reference(inputs, p):
    import torch

    x, lens = inputs["x"], inputs["lengths"].long()
    seg = torch.repeat_interleave(torch.arange(len(lens), device=x.device), lens)
    sums = torch.zeros(len(lens), x.shape[1], device=x.device, dtype=torch.float64)
    sums.index_add_(0, seg, x.double())
    return (sums / lens[:, None].double()).to(x.dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _tokens(p):
    return float(lengths(p).sum())


def _bytes(p):
    esize = {"bfloat16": 2, "float16": 2, "float32": 4}[p["dtype"]]
    return float((_tokens(p) + p["S"]) * p["D"] * esize + 8 * p["S"])


_STAGE = StageModel("pool", flops=lambda p: (_tokens(p) + p["S"]) * p["D"], bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_segment_prefix",
    description="Calibration (held back, set 7; planted: every program sums all earlier segments' lengths to "
    "find its start): jagged mean pooling; v0 a per-program prefix loop, v1 the offsets computed once",
    params=(
        Param("S", 16384, min=1, max=1 << 20, doc="segments (one program each)"),
        Param("MAXLEN", 512, min=2, max=1 << 16, doc="lengths drawn in 1..MAXLEN-1"),
        Param("D", 128, min=1, max=1024, doc="features (a power of two)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: each program sums the lengths of all segments before it (O(S^2) scalar loop)",
            (_STAGE,),
            _build("v0"),
        ),
        Version("v1", "fix: the start read from offsets computed once", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: {"bfloat16": 1e-2, "float16": 2e-3}.get(dtype, 1e-5),
)
