"""Calibration pair (second held-back set) — one short row per one-warp program: occupancy limited
by the SM's block slots (Nsight Compute's occupancy section: "Block Limit SM"; launch statistics:
tiny blocks; CUDA C++ Best Practices Guide, "Thread and Block Heuristics": blocks of at least 64
threads, several warps per block).

The work: L2-normalise every row of an embedding table x [rows, D] (rows = 2^21, D = 64, bf16;
fp16 allowed for the CPU interpreter): out = x / max(‖x‖₂, 1e-12), fp32 math (F.normalize).

Planted problem (v0): the natural "one program per row" launch: 2^21 programs of BLOCK = 64
elements and num_warps=1 (one warp is enough for 64 elements): each program reads 128 bytes,
reduces them with warp shuffles and writes 128 bytes. An SM holds at most 32 blocks, so at most
32 warps of its 64 (theoretical occupancy 50 %, limited by the block slots, not by registers or
shared memory), each with 128 bytes of loads in flight: ~4 KB per SM, far below what hides DRAM
latency (Little's law: ~3 TB/s × ~1 µs ≈ 3 MB over 132 SMs ≈ 23 KB per SM); and every 256 bytes
of traffic costs a block launch and retirement.
Fix (v1): 32 rows per program as a [32, 64] tile with num_warps=4 (the row reduction stays within
a warp): 65,536 programs of 4 KB each, 16 blocks (64 warps) per SM.

Model: each element read once and written once (bytes 2·rows·D·itemsize = 537 MB at the
defaults), 3 FLOPs per element (square, add, scale).

Expected on an H100 SXM (per design): v1 streams at ~3 TB/s → ~180 µs; v0 is latency-bound at
~4 KB in flight per SM (≲ 1 TB/s) and block-launch-bound: ~3-4x slower. No pipe or memory level
is busy in v0 (resource: none; cause: occupancy, limited by the block slots).
Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-25): quick check (do_bench median, L2 flushed) v0 1265 µs,
v1 182 µs (6.9x, more than the design's 3-4x); recorded event medians v0 1475 µs, v1 180 µs (+718 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(p["rows"], p["D"], generator=g, device=device, dtype=torch.float32).to(dt)
    return {"x": x, "out": torch.full_like(x, float("nan"))}


def _reference(inputs, p):
    x = inputs["x"].double()
    return (x / x.norm(dim=1, keepdim=True).clamp_min(1e-12)).to(inputs["x"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return 2.0 * p["rows"] * p["D"] * p.itemsize


_STAGE = StageModel("normalize", flops=lambda p: 3.0 * p["rows"] * p["D"], bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_row_programs",
    description="Calibration (held back, set 2; planted: one 64-element row per one-warp program): L2-normalise "
    "the rows of a [2^21, 64] bf16 table; v0 one row per program (num_warps=1), v1 32 rows per program (4 warps)",
    params=(
        Param("rows", 1 << 21, min=1, max=1 << 26, doc="rows"),
        Param("D", 64, min=1, max=256, doc="row length (one program covers a whole row)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: one row (64 elements, 128 bytes) per program, num_warps=1: 2^21 tiny programs, "
            "32 blocks (32 warps) per SM at most",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: 32 rows per program as a [32, 64] tile, num_warps=4 (row reductions within a warp)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
)
