"""Calibration pair (seventh held-back set) — Hamming distances whose population count is computed bit
by bit in software where the GPU has an instruction for it (CUDA C++ Best Practices Guide, "Instruction
optimization" and "Math libraries": use the intrinsic the hardware provides, here ``__popc``, one POPC per
32-bit word; Triton exposes it as ``tl.extra.cuda.libdevice.popc``, not in ``tl`` itself, so a bit loop
is what one writes without knowing it; Nsight Compute's pipe utilisation: the integer ALU pipe saturated).

The work: binary-embedding retrieval, the Hamming distance between each of Q = 4 query codes and each of
N = 2^23 database codes of 256 bits (8 int32 words), dist[q, n] = Σ_w popcount(db[n, w] ^ query[q, w]),
one program of 4 warps per 128 database codes, a runtime loop over the queries.

Planted problem (v0): the popcount as ``for b in tl.static_range(32): c += (v >> b) & 1`` (a shift, an
and and an add per bit: ~96 integer instructions per word where one suffices, 32 x 8 x 4 = 1024 bits per
database code).
Fix (v1): ``libdevice.popc(v)``; everything else (xor, sums, loads, stores) unchanged.

Model: the database read once, the distances (int32) written once (bytes N·32 + Q·N·4 + the queries =
403 MB at the defaults); the work counted as integer operations, 2 per word and query (the xor and the
popcount), reported as "flops" (2·Q·N·8 = 5.4e8).

Expected on an H100 SXM (per design): v1 ~403 MB → ~150 µs (DRAM); v0 ~2^23·4·8·~80 instructions / 32
lanes ≈ 0.67 G warp instructions, most of them shifts and logic on the ALU pipe (half the issue rate) →
~1.5 ms: ~10x. v0's limiter is the ALU pipe (resource "alu"); the fix moves the bit loop to the hardware
instruction (cause "move_work").
Tolerance: integer distances: exact (0).
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 1312 µs
(no popc.b32; ~300 more PTX lines than v1: the bit loop compiled to about one bit extract and an add per bit,
fewer instructions than the design's three; 70 registers), v1 138 µs (32 popc.b32, 2.9 TB/s): 9.5x;
recorded event medians v0 2010 µs, v1 136 µs (+1377 %).
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    n, q, w = p["N"], p["Q"], p["W"]
    lo, hi = -(2**31), 2**31 - 1
    db = torch.randint(lo, hi, (n, w), generator=g, device=device, dtype=torch.int64).to(torch.int32)
    query = torch.randint(lo, hi, (q, w), generator=g, device=device, dtype=torch.int64).to(torch.int32)
    # Poisoned output: -1 wherever a version fails to write shows up in the check.
    return {"db": db, "query": query, "dist": torch.full((q, n), -1, device=device, dtype=torch.int32)}


def _popcount_ref(v):
    """Population count of int32 words by nibble lookup (no bit loop)."""
    import torch

    table = torch.tensor([bin(i).count("1") for i in range(16)], device=v.device, dtype=torch.int32)
    u = v.to(torch.int64) & 0xFFFFFFFF
    return sum(table[(u >> (4 * k)) & 0xF] for k in range(8))


def _reference(inputs, p):
    x = inputs["query"][:, None, :] ^ inputs["db"][None, :, :]  # [Q, N, W]
    return _popcount_ref(x).sum(dim=2).to(x.dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(4 * p["N"] * p["W"] + 4 * p["Q"] * p["N"] + 4 * p["Q"] * p["W"])


_STAGE = StageModel("hamming", flops=lambda p: 2.0 * p["Q"] * p["N"] * p["W"], bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_popcount",
    description="Calibration (held back, set 7; planted: population count computed bit by bit): Hamming "
    "distances of 256-bit codes; v0 a 32-step shift-and-add loop per word, v1 libdevice.popc",
    params=(
        Param("N", 1 << 23, min=1, max=1 << 26, doc="database codes"),
        Param("Q", 4, min=1, max=16, doc="query codes"),
        Param("W", 8, min=1, max=64, doc="32-bit words per code (a power of two: a tl.arange)"),
        Param("dtype", "int32", choices=("int32",), doc="code words"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: popcount by a 32-step shift/and/add loop per word",
            (_STAGE,),
            _build("v0"),
        ),
        Version("v1", "fix: libdevice.popc (one POPC per word)", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
