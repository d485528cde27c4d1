"""Calibration pair (second held-back set) — uncoalesced stores: a cast-transpose whose loads are
coalesced and whose stores are not (Nsight Compute's UncoalescedGlobalAccess rule on the store
side: L2 sectors per store request; CUDA C++ Best Practices Guide, "Coalesced Access to Global
Memory", and the shared-memory transpose).

The work: the cast-transpose a training step does before a weight-gradient GEMM (Transformer
Engine's cast_transpose): out = (s · x)ᵀ for x [M, K] float32 (M = K = 8192), out [K, M] in bf16
(fp16 allowed for the CPU interpreter), s = 0.5.

Planted problem (v0): the natural row-wise kernel: program (m, b) loads x[m, 1024·b : 1024·(b+1)]
(contiguous, 16-byte vector loads) and stores each element to out[k, m]: consecutive lanes write
2-byte values M·2 = 16 KB apart, so every warp store touches 32 different 32-byte sectors (and
128-byte lines) with 2 useful bytes each. Programs are launched in row order, so the 16 programs
whose stores share a sector run at the same time and L2 merges their partial writes before DRAM:
DRAM traffic stays near the model; the cost is in the store path: 16 L2 sector writes and 16 L1
store wavefronts per 32 useful bytes (67 M of each at the defaults). By design estimate both
sides of that path take ~0.3 ms (L1: one wavefront per clock per SM; L2: ~200 G sectors/s), within
the estimate's error of each other, so no single resource is named (resource: none).
Fix (v1): 64x64 tiles: load a tile along x's rows (coalesced), ``tl.trans`` it (the compiler
stages the layout change through shared memory) and store it along out's rows (coalesced).
Loads are the same in both versions; only the stores change.

Model: each x element read once (4 bytes) and each out element written once (itemsize): 403 MB
at the defaults; 1 FLOP per element.

Expected on an H100 SXM (per design): v1 at ~2.8 TB/s ≈ 145 µs; v0 bound by its 67 M
single-element store sectors ≈ 0.35-0.45 ms: ≈ 2.5-3x.
Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-25): quick check (do_bench median, L2 flushed) v0 1109 µs,
v1 142 µs (7.8x: v0 ~3x slower than the design's store-path estimate); recorded event medians v0 1312 µs,
v1 141 µs (+830 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

SCALE = 0.5


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(p["M"], p["K"], generator=g, device=device, dtype=torch.float32)
    dt = getattr(torch, p["dtype"])
    return {"x": x, "out": torch.full((p["K"], p["M"]), float("nan"), device=device, dtype=dt)}


def _reference(inputs, p):
    return (SCALE * inputs["x"].double()).t().to(inputs["out"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return p["M"] * p["K"] * (4.0 + p.itemsize)


_STAGE = StageModel("cast_transpose", flops=lambda p: float(p["M"] * p["K"]), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_cast_transpose",
    description="Calibration (held back, set 2; planted: uncoalesced stores): out = (0.5 x)^T cast to bf16 for x "
    "[M, K] fp32; v0 row-wise (coalesced loads, 2-byte stores M*2 bytes apart), v1 64x64 tiles through tl.trans",
    params=(
        Param("M", 8192, min=1, max=1 << 16, doc="rows of x (columns of out)"),
        Param("K", 8192, min=1, max=1 << 16, doc="columns of x (rows of out)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: one program per 1024-element piece of a row of x: coalesced loads, each element stored "
            "to out[k, m] (every lane of a warp store in its own sector)",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: 64x64 tiles loaded along x's rows, tl.trans, stored along out's rows (coalesced both ways)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
)
