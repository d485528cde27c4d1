"""Calibration pair (fifth held-back set) — a block far wider than the row: most lanes of every
program masked off, their work done all the same (Nsight Compute's instruction statistics and
'ThreadDivergence'/predication rules: predicated-off threads and instructions on masked lanes still take
issue slots; CUDA C++ Best Practices Guide, "Execution configuration": size the block to the work).

The work: a row-wise softmax, y[m, :] = softmax(x[m, :]), over M = 262144 rows of N = 300 scores (a
300-way classifier's logits, or the attention scores over 300 keys), bf16 in and out (fp16 allowed for the
CPU interpreter), fp32 math; one program of 4 warps per row.

Planted problem (v0): BLOCK = 4096 hard-coded (the longest row the kernel was written for): each program
loads, compares, subtracts, exponentiates, sums, scales and stores a 4096-wide tile of which 300 lanes are
real (7 %): 32 elements per thread, ~12 instructions each (predicated loads and stores, bf16 conversion,
max, FFMA, MUFU.EX2, sum, scale), 13.7x the issue slots the row needs.
Fix (v1): BLOCK = triton.next_power_of_2(N) = 512 (4 elements per thread, 59 % real lanes); nothing else
changes (same 4 warps, one row per program).

Model: x read once, y written once (bytes 2·2·M·N = 315 MB at the defaults), ~4 FLOPs per element (max,
subtract, exp, scale: 4·M·N).

Expected on an H100 SXM (per design): v0 ~1.07e9 element-slots x ~12 instructions = 4e8 warp
instructions over 132 SMs x 4 schedulers → ~430 µs, issue-bound (the ALU, FMA and XU pipes each carry a
large share; none is alone the limit); v1 streams 315 MB → ~100-130 µs (one 600-byte row per 4-warp
program: latency-bound, not at the DRAM peak): ≈ 3.5-4x. v0's limiter is the issue slots (resource
"issue"), its waste work on masked lanes that the fix removes (cause "move_work").
Tolerance: bf16 outputs: 1e-2 relative.
Measured (H200, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 829 µs
(78 registers, 32 predicated ld.global.b16 and 32 ex2 per thread), v1 191 µs (18 registers, 4 of each): 4.3x;
recorded event medians v0 849 µs, v1 197 µs (+330 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    m, n = p["M"], p["N"]
    x = (torch.randn(m, n, generator=g, device=device, dtype=torch.float32) * 3.0).to(dt)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "y": torch.full((m, n), float("nan"), device=device, dtype=dt)}


def _reference(inputs, p):
    return inputs["x"].double().softmax(dim=1).to(inputs["y"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(2 * p["M"] * p["N"] * p.itemsize)


_STAGE = StageModel("softmax", flops=lambda p: 4.0 * p["M"] * p["N"], bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_wide_block",
    description="Calibration (held back, set 5; planted: a block 13x wider than the row, most lanes masked off "
    "but computed): row softmax over rows of 300; v0 BLOCK=4096, v1 BLOCK=next_power_of_2(N)=512",
    params=(
        Param("M", 262144, min=1, max=1 << 24, doc="rows"),
        Param("N", 300, min=1, max=4096, doc="columns (scores per row)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: BLOCK=4096 for rows of N=300 (most lanes masked off, their work still issued)",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: BLOCK=next_power_of_2(N) (512 for N=300)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-2 if dtype == "bfloat16" else 2e-3,
)
