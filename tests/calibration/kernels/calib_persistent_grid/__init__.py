"""Calibration pair (fifth held-back set) — a persistent, grid-stride kernel launched with one small
program per SM: every SM busy, but with 4 of its 64 warp slots filled (Nsight Compute's launch statistics
and 'Occupancy' rules: achieved occupancy far below the theoretical, set by the grid, not by registers or
shared memory; CUDA C++ Best Practices Guide, "Occupancy" and "Hiding register dependencies": enough
warps in flight to cover memory latency).

The work: the SwiGLU gate of an MLP, out = silu(g) * u, over n = 2^27 elements (g, u and out bf16; fp16
allowed for the CPU interpreter), fp32 math: 805 MB moved at the defaults. Written as a persistent kernel
(the pattern of Triton's persistent-matmul tutorial): each program walks BLOCK = 1024-element tiles
pid, pid + P, pid + 2P, ... (4 warps, 8 elements per thread per tile).

Planted problem (v0): P = the SM count (132 on an H100 SXM), copied from the persistent GEMM (where one
program fills an SM with its shared memory and registers): here a program is 4 warps holding two 2 KB loads
in flight, so each SM has ~4 KB of loads outstanding and the loop waits a full memory latency per tile:
DRAM far from busy, nothing else busy either.
Fix (v1): P = 8 programs per SM (1056): 32 warps and ~32 KB in flight per SM; the kernel, its tile and
its warps unchanged. Both launches are persistent by design (Stage.persistent).

Model: g and u read once, out written once (bytes 3·2·n = 805 MB at the defaults), ~6 FLOPs per element
(silu's exp, add, divide, the product: 6·n).

Expected on an H100 SXM (per design): v1 near the DRAM peak, ~270-300 µs; v0 ~4 KB per SM per ~1 µs of
loaded latency → ~0.5-0.7 TB/s → ~1.2-1.6 ms: ≈ 4-5x. v0's limiter is latency with too few warps per SM
(cause "occupancy"; resource None: no pipe or memory level is near its peak).
Tolerance: bf16 outputs: 1e-2 relative.
Measured (H200, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 664 µs
(132 programs, 1.2 TB/s of the model's bytes), v1 199 µs (1056 programs, 4.05 TB/s): 3.3x; recorded event
medians v0 664 µs, v1 195 µs (+240 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    n = p["n"]
    gate = (torch.randn(n, generator=g, device=device, dtype=torch.float32) * 2.0).to(dt)
    up = torch.randn(n, generator=g, device=device, dtype=torch.float32).to(dt)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"g": gate, "u": up, "out": torch.full((n,), float("nan"), device=device, dtype=dt)}


def _reference(inputs, p):
    g = inputs["g"].double()
    return (g * g.sigmoid() * inputs["u"].double()).to(inputs["out"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(3 * p["n"] * p.itemsize)


_STAGE = StageModel("swiglu", flops=lambda p: 6.0 * p["n"], bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_persistent_grid",
    description="Calibration (held back, set 5; planted: a persistent memory-bound kernel with one 4-warp "
    "program per SM): SwiGLU gate silu(g)*u, grid-stride loop; v0 SM-count programs, v1 8 programs per SM",
    params=(
        Param("n", 1 << 27, min=1, max=1 << 31, doc="elements"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: persistent grid of one 4-warp program per SM (4 warps per SM in flight)",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: persistent grid of 8 programs per SM (32 warps per SM)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-2 if dtype == "bfloat16" else 2e-3,
)
