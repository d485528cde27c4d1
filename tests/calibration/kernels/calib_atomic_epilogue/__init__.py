"""Calibration pair (eleventh held-back set) — atomic adds where every output element has one writer: a GEMM
epilogue written for split-K (several programs add partial sums into one C tile, so C is zeroed first and
each program ``tl.atomic_add``s its tile) and run with SPLIT_K = 1, where a plain store would do (the Triton
split-K matmul's epilogue is ``if SPLIT_K == 1: tl.store(...) else: tl.atomic_add(...)``; CUDA C++
Programming Guide, "Atomic Functions": an atomic is a read-modify-write performed in the L2; CUDA C++ Best
Practices Guide, "Minimize data transfer").

The work: C = A·B in fp32 for A [M, K], B [K, N] fp16 (fp32 allowed), M = N = 8192, K = 64: a low-rank
product materialised (a rank-64 update, a LoRA delta B·A built as a dense matrix): ~8.6 GFLOPs, 268 MB of fp32
output: the output's bytes dominate. One program of 8 warps per 128 x 128 tile of C, K in one 64-wide step
(tensor cores).

Planted problem (v0): the split-K epilogue at SPLIT_K = 1: C zeroed (torch ``zero_``, 268 MB written) then
every element of C atomically added (``tl.atomic_add``, fp32, one atomic per element, no other writer): the
L2 fetches each line of zeros from DRAM to add to it and writes it back: ~3x the DRAM bytes of the model
(the memset, the read of the zeros, the write), every element through the L2's atomic units.
Fix (v1): the same kernel storing its tile (``tl.store``), no memset.

Model: A and B read once, C written once (bytes (M·K + K·N)·itemsize + 4·M·N = 270 MB at the defaults);
FLOPs 2·M·N·K (tensor cores).

Expected on an H100 SXM (per design): v1 ~270 MB at ~2.8-3 TB/s ≈ 0.09-0.1 ms; v0 the memset (~0.09 ms) plus
the atomics (≥ 2x C's bytes, at the L2 atomic units' rate, likely below the DRAM's) ≥ 0.27 ms: ≥ 3x. Cause
"atomics" (the atomic read-modify-writes and the memset they need, where stores suffice); resource None: the
L2's atomic units or the DRAM (3x bytes), by design not one sure level.
Tolerance: a K = 64 fp32-accumulated dot (the GEMM's rounding, fp32 output): 1e-3 (fp16 inputs), TF32 for fp32
inputs: 5e-3.
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    a = torch.randn(p["M"], p["K"], generator=g).to(device=device, dtype=dt)
    b = torch.randn(p["K"], p["N"], generator=g).to(device=device, dtype=dt)
    # Poisoned output: NaN wherever a version fails to write (or fails to zero before adding) shows up.
    return {
        "a": a,
        "b": b,
        "out": torch.full((p["M"], p["N"]), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    return inputs["a"].float() @ inputs["b"].float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float((p["M"] * p["K"] + p["K"] * p["N"]) * p.itemsize + 4 * p["M"] * p["N"])


_STAGE = StageModel(
    "lowrank", flops=lambda p: float(2 * p["M"] * p["N"] * p["K"]), bytes=_bytes, tensor_cores=True
)

KERNEL = KernelPackage(
    name="calib_atomic_epilogue",
    description="Calibration (held back, set 11; planted: atomic adds where each output has one writer): C = A B "
    "(K = 64, fp32 out); v0 the split-K epilogue at SPLIT_K = 1 (C zeroed, then atomically added), v1 a plain "
    "store",
    params=(
        Param("M", 8192, min=1, max=1 << 16, doc="rows of A and C"),
        Param("N", 8192, min=1, max=1 << 16, doc="columns of B and C"),
        Param("K", 64, min=16, max=256, doc="the inner dimension (a power of two, one step)"),
        Param("dtype", "float16", choices=("float16", "float32"), doc="A and B dtype (C is float32)"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: C zeroed, then every element atomically added", (_STAGE,), _build("v0")),
        Version("v1", "fix: the tile stored", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: _bytes(p),
    tolerance=lambda dtype: 1e-3 if dtype == "float16" else 5e-3,
)
