"""Calibration pair (sixth held-back set) — dropout whose random stream gives four values per Philox
counter (the layout of curand's Philox4x32-10 and of PyTorch's own dropout), written per element: every
element runs its counter's whole 10-round Philox and keeps one of the four outputs, so each Philox block is
computed four times (Nsight Compute's instruction statistics and issue-slot rules: the issue slots full of
integer multiply/xor work the result does not need; CUDA C++ Best Practices Guide, "Instruction
optimization": do not recompute what can be shared, here across the four lanes of one counter).

The work: out = x * keep / (1 - p), p = 0.1, over n = 2^27 bf16 elements (fp16/fp32 allowed for the CPU
interpreter); element i's random value is output (o + i) % 4 of Philox4x32-10 at counter (o + i) // 4
(key = seed, o = the generator's offset, a multiple of 4), keep = (value >> 9) >= p·2^23. 4096 elements
per program, 4 warps; seed and offset are runtime arguments (not specialised, as a generator's state is).

Planted problem (v0): per element, ``r0, r1, r2, r3 = tl.randint4x(seed, (o + i) // 4)`` and a select of
component (o + i) % 4: four Philox blocks per counter (~10 rounds of two 32x32→64-bit multiplies, xors and
key additions each), 3 of them discarded.
Fix (v1): one ``tl.randint4x`` per counter over the program's 1024 counters, its four outputs interleaved
into element order (tl.interleave); the same values, the same mask; nothing else changes.

Model: x read once, out written once (bytes 2·2·n = 537 MB at the defaults), 1 FLOP per element (the
scale); the RNG's integer work is not in the FLOP model.

Expected on an H100 SXM (per design): v0 ~75 instructions per element (a Philox block ~55, the rest the
select, compare, scale, conversions) = 3.1e8 warp instructions over 132 SMs x 4 schedulers → ~0.4-0.5 ms,
issue-bound (the integer multiplies on the FMA pipe, the xors and adds on the ALU: no single pipe at its
peak); v1 ~30 per element → near the DRAM time of 537 MB, ~0.18-0.2 ms: ≈ 2-2.5x. v0's limiter is the
issue slots (resource "issue"), the redundant Philox work the fix removes (cause "move_work").
Tolerance: bf16 outputs: 1e-2 relative (the mask is exact: any mismatched element shows as an error of
order |x|).
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 504 µs (578
mul.hi.u32 per thread in the PTX, 67 registers), v1 190 µs (146 mul.hi.u32, 2.8 TB/s), the mask exact (0.9000
kept): 2.65x; recorded event medians v0 755 µs, v1 216 µs (+249 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

P_DROP = 0.1
P_INT = round(P_DROP * (1 << 23))  # keep when (value >> 9) >= P_INT
SEED = 20261126
OFFSET = 4 * 12345  # the generator's offset: a multiple of 4, as torch's Philox offsets are


def _philox_ref(counter, seed):
    """Philox4x32-10 in int64 torch arithmetic (the reference's own, not Triton's): the four outputs at
    (c0 = counter, c1 = c2 = c3 = 0) with key (seed lo, seed hi)."""
    import torch

    m32 = 0xFFFFFFFF
    ka, kb, ra, rb = 0x9E3779B9, 0xBB67AE85, 0xD2511F53, 0xCD9E8D57

    def mul(a_const, x):  # (hi, lo) of the 64-bit product, x < 2^32, exact in int64
        a_hi, a_lo = a_const >> 16, a_const & 0xFFFF
        p_hi, p_lo = x * a_hi, x * a_lo  # < 2^48 each
        hi = (p_hi + (p_lo >> 16)) >> 16
        lo = (((p_hi & 0xFFFF) << 16) + p_lo) & m32
        return hi, lo

    c0 = counter.to(torch.int64) & m32
    c1 = torch.zeros_like(c0)
    c2 = torch.zeros_like(c0)
    c3 = torch.zeros_like(c0)
    k0, k1 = seed & m32, (seed >> 32) & m32
    for _ in range(10):
        hb, lb = mul(rb, c2)
        ha, la = mul(ra, c0)
        c0, c1, c2, c3 = hb ^ c1 ^ k0, lb, ha ^ c3 ^ k1, la
        k0, k1 = (k0 + ka) & m32, (k1 + kb) & m32
    return c0, c1, c2, c3


def keep_mask(n, device):
    """The reference's keep mask for elements 0..n-1."""
    import torch

    idx = OFFSET + torch.arange(n, device=device, dtype=torch.int64)
    outs = torch.stack(_philox_ref(idx // 4, SEED), dim=1)  # [n, 4]
    value = outs.gather(1, (idx % 4)[:, None])[:, 0]
    return (value >> 9) >= P_INT


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    n = p["n"]
    x = torch.randn(n, generator=g, device=device, dtype=torch.float32).to(dt)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "out": torch.full((n,), float("nan"), device=device, dtype=dt)}


def _reference(inputs, p):
    x = inputs["x"]
    keep = keep_mask(x.numel(), x.device)
    return (x.double() * keep.double() * (1.0 / (1.0 - P_DROP))).to(x.dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(2 * p["n"] * p.itemsize)


_STAGE = StageModel("dropout", flops=lambda p: float(p["n"]), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_philox_dropout",
    description="Calibration (held back, set 6; planted: per-element dropout recomputing its counter's whole "
    "Philox4x32 block to keep one of four values): out = x * keep / (1 - p), bf16; v0 a Philox block per "
    "element, v1 one per counter (four elements)",
    params=(
        Param("n", 1 << 27, min=1, max=(1 << 31) - (1 << 20), doc="elements"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: a whole Philox4x32 block per element, one of its four outputs kept",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: one Philox4x32 block per counter, its four outputs interleaved into four elements",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: {"bfloat16": 1e-2, "float16": 2e-3}.get(dtype, 1e-6),
)
