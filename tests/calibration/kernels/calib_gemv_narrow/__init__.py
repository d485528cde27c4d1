"""Calibration pair (twenty-first held-back set) — a matrix-vector product that steps through each row 128
elements (256 bytes) at a time, a load round trip and a block reduction a step, where steps of 2048 elements
serve: one program a row (4 warps), ``acc += tl.sum(w_tile * v_tile)`` in a loop over the row with BLOCK_K =
128, one fp16 element a thread a step, the tile size kept from a small-K test. Each step issues one 2-byte
load a thread and waits for it (and for the block's reduction, a barrier) before the next: at full occupancy
(16 programs, 64 warps an SM) 4 KB of the matrix is in flight an SM, far below what DRAM's latency needs to
be covered. Nothing fails; the values are the same up to the order of the fp32 sums. The fix: BLOCK_K = 2048
(16 elements, two 16-byte loads a thread a step), 16 times the bytes in flight. Sources: V. Volkov, "Better
Performance at Lower Occupancy" (GTC 2010: memory throughput needs bytes in flight = latency x bandwidth,
obtained by more independent accesses per thread, not only more threads), the CUDA C++ Best Practices Guide
("Coalesced Access to Global Memory", "Hiding Register Dependencies") and the Triton tutorials (each program
works on a block whose size sets the work in flight).

The work: y [M] fp32 = W [M, K] fp16 · v [K] fp16 (M = 16384, K = 8192: W 256 MB), fp32 accumulation.

Planted problem (v0): stage "gemv_k128": 64 steps a row, each a 256-byte load of W (2 bytes a thread), the
matching part of v, a product, a block sum (warp shuffles, shared memory, a barrier) added to the row's
accumulator.
Fix (v1): stage "gemv_k2048": 4 steps a row of 4 KB (32 bytes a thread).

Model (both): bytes W and v read once, y written once (2·M·K + 2·K + 4·M); FLOPs 2·M·K.

Expected on an H100 SXM (per design): v1 streams W at ~3 TB/s, ~85-95 µs; v0 at 4 KB in flight an SM with a
~1 µs round trip a step (the load and the reduction) ~0.5-1 TB/s, ~250-400 µs: ~3-4x. Cause "latency" (warps
wait on memory round trips, little in flight, no unit busy; the fix puts more independent bytes in flight a
step), resource None.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    m, k = p["M"], p["K"]
    g = torch.Generator(device="cpu").manual_seed(0)
    w = (torch.randn(m, k, generator=g) / k**0.5).to(torch.float16)
    v = torch.randn(k, generator=g).to(torch.float16)
    return {
        "W": w.to(device),
        "v": v.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((m,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    return (inputs["W"].double() @ inputs["v"].double()).to(torch.float32)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * p["M"] * p["K"]


def _bytes(p):
    return 2.0 * p["M"] * p["K"] + 2.0 * p["K"] + 4.0 * p["M"]


KERNEL = KernelPackage(
    name="calib_gemv_narrow",
    description="Calibration (held back, set 21; planted: a matrix-vector product stepping through each row "
    "128 elements at a time, a load round trip and a block reduction a step, where 2048-element steps serve): "
    "y = W [16384, 8192] fp16 · v; v0 BLOCK_K 128, v1 BLOCK_K 2048 (one program a row, 4 warps)",
    params=(
        Param("M", 16384, min=1, max=1 << 20, doc="rows"),
        Param("K", 8192, min=1, max=1 << 20, doc="columns"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: BLOCK_K = 128: one 2-byte load a thread a step, a block sum each step",
            (StageModel("gemv_k128", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: BLOCK_K = 2048: 32 bytes a thread a step",
            (StageModel("gemv_k2048", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-3,
)
