"""Calibration pair (fourth held-back set) — a tiled GEMM compiled without software pipelining:
num_stages=1 (a config tuned for another GPU: AMD's Triton guides advise num_stages 1-2), so every
K step loads its tiles from global memory, waits for them, stores them to shared memory and only
then runs its MMAs; with 128x256 tiles one program fits an SM (the 128 fp32 accumulators per
thread), so no other program hides the wait (Nsight Compute's warp state statistics: stalls on
long scoreboard and barriers dominate, neither the tensor pipe nor DRAM near their peaks; CUDA C++
Best Practices Guide: overlap memory transfers with computation, asynchronous copies).

The work: C = A @ B with A [M, K], B [K, N] and C bf16 (fp16 allowed for the CPU interpreter),
M = N = K = 4096, fp32 accumulation, tl.dot (128x256x64 tiles, 8 warps, grouped launch order).

Planted problem (v0): num_stages=1 (PTX read with Triton 3.9 for sm_90 without a GPU: plain
ld.global.v4 loads of each K step's tiles, then st.shared and the wgmma; 48 KB of shared memory).
Fix (v1): num_stages=3: cp.async copies of the next two K steps' tiles in flight while the current
step's wgmma run (144 KB of shared memory). Nothing else differs.

Model: FLOPs 2·M·N·K (137 GFLOP at the defaults, tensor cores); bytes A and B read once, C written
once: 101 MB (compute-bound by the model).

Expected on an H100 SXM (per design): v1 ~550-700 TFLOP/s → ~200-250 µs; v0 pays a global-load
latency (~1 µs) per K step next to ~0.6 µs of MMAs, one program per SM: ≈ 2x slower. No pipe or
memory level is busy device-wide in v0 (resource: none); the cause is latency not hidden.
Tolerance: bf16 output (the default 1e-2).
Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 420 µs,
v1 202 µs (2.1x; v0 222 registers, 48 KB shared, v1 199 registers, 144 KB); recorded event medians v0 534 µs,
v1 241 µs (+122 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    m, n, k = p["M"], p["N"], p["K"]
    a = torch.randn(m, k, generator=g, device=device, dtype=torch.float32).to(dt)
    b = (torch.randn(k, n, generator=g, device=device, dtype=torch.float32) / k**0.5).to(dt)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"a": a, "b": b, "c": torch.full((m, n), float("nan"), device=device, dtype=dt)}


def _reference(inputs, p):
    return (inputs["a"].double() @ inputs["b"].double()).to(inputs["a"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    m, n, k = p["M"], p["N"], p["K"]
    return float((m * k + k * n + m * n) * p.itemsize)


_STAGE = StageModel("matmul", flops=lambda p: 2.0 * p["M"] * p["N"] * p["K"], bytes=_bytes, tensor_cores=True)

KERNEL = KernelPackage(
    name="calib_no_pipelining",
    description="Calibration (held back, set 4; planted: a GEMM with no software pipelining, num_stages=1): C = A @ B, bf16 4096^3, 128x256x64 tiles; v0 num_stages=1, v1 num_stages=3",
    params=(
        Param("M", 4096, min=1, max=1 << 16, doc="rows of A and C"),
        Param("N", 4096, min=1, max=1 << 16, doc="columns of B and C"),
        Param("K", 4096, min=1, max=1 << 16, doc="columns of A, rows of B"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: num_stages=1 (each K step's loads waited for before its MMAs; 128x256x64, 8 warps)",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the same kernel with num_stages=3 (the next K steps' tiles copied asynchronously during the MMAs)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
)
