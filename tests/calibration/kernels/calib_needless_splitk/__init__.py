"""Calibration pair (fifteenth held-back set) — split-K where the grid already fills the GPU: a GEMM
whose K dimension is split into SPLIT_K slices (one program a tile and slice, fp32 partial tiles written
to a workspace, a second kernel summing the slices) although the output tiles alone already make
several waves: split-K pays off for skinny outputs with a long K (few tiles, few programs), and a
configuration fixed for those (or an autotuning table keyed on the wrong sizes) applied to a large
square GEMM round-trips SPLIT_K fp32 copies of the output through device memory. Sources: CUTLASS's
GEMM documentation ("parallel split-K": partial products to a workspace, then a reduction kernel; for
problems whose M·N tiles cannot fill the GPU); Osama, Merrill, Cecka, Garland & Kerr, "Stream-K:
Work-centric parallel decomposition for dense matrix-matrix multiplication on the GPU" (PPoPP 2023:
split-K's workspace traffic and reduction as its cost); the SPLIT_K configurations of Triton's former
triton.ops.matmul.

The work: C = A·B with A [M, K], B [K, N] (M = N = 4096, K = 2048, bf16; fp16 allowed for the CPU
interpreter), fp32 accumulation, C in the input dtype. Tiles 128x128x64, 8 warps, 3 stages, grouped
order (GROUP_M = 8): 1024 output tiles, 7.8 waves of 132 SMs.

Planted problem (v0): SPLIT_K = 8: stage "partial" (8192 programs, each a tile over a 256-long slice of
K, its fp32 tile stored to a workspace W [8, M, N]: 512 MB), stage "reduce" (C = the sum of the eight
slices: W read back, 512 MB, C written).
Fix (v1): stage "mm": SPLIT_K = 1, each program's K loop over all of K and C stored directly.

Model (what each stage moves and computes as written): "partial" 2·M·N·K FLOPs (tensor cores), A and B
read once and W written (M·K + K·N)·itemsize + 4·SPLIT_K·M·N; "reduce" SPLIT_K·M·N adds, W read and C
written; "mm" 2·M·N·K FLOPs, A, B read and C written once.

Expected on an H100 SXM (per design): the GEMM's 68.7 GFLOP ~0.13 ms at ~500 TFLOP/s in both; v0 adds
the workspace's 512 MB written (~175 µs, the partial stage write-bound) and read back (~175 µs) with C
written: ~0.35 ms against ~0.14 ms: ~2.5x. Cause "over_fetch" (the fp32 partials' round trip
through DRAM: bytes the result does not need), resource "dram".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    dt = getattr(torch, p["dtype"])
    m, n, k, s = p["M"], p["N"], p["K"], p["SPLIT_K"]
    g = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(m, k, generator=g, device=device, dtype=torch.float32) / k**0.25
    b = torch.randn(k, n, generator=g, device=device, dtype=torch.float32) / k**0.25
    return {
        "a": a.to(dt),
        "b": b.to(dt),
        "w": torch.empty(s, m, n, device=device, dtype=torch.float32),
        # Poisoned output: NaN wherever a version fails to write shows up in the check.
        "c": torch.full((m, n), float("nan"), device=device, dtype=dt),
    }


def _reference(inputs, p):
    return (inputs["a"].double() @ inputs["b"].double()).to(inputs["a"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * p["M"] * p["N"] * p["K"]


def _operands(p):
    return float(p["M"] * p["K"] + p["K"] * p["N"]) * p.itemsize


def _bytes(p):
    return _operands(p) + float(p["M"] * p["N"]) * p.itemsize


_PARTIAL = StageModel(
    "partial",
    flops=_flops,
    bytes=lambda p: _operands(p) + 4.0 * p["SPLIT_K"] * p["M"] * p["N"],
    tensor_cores=True,
)
_REDUCE = StageModel(
    "reduce",
    flops=lambda p: float(p["SPLIT_K"] * p["M"] * p["N"]),
    bytes=lambda p: 4.0 * p["SPLIT_K"] * p["M"] * p["N"] + float(p["M"] * p["N"]) * p.itemsize,
)
_MM = StageModel("mm", flops=_flops, bytes=_bytes, tensor_cores=True)

KERNEL = KernelPackage(
    name="calib_needless_splitk",
    description="Calibration (held back, set 15; planted: split-K where the grid already fills the GPU): "
    "C = A·B, 4096 x 4096 x 2048 bf16; v0 K split in 8 slices with fp32 partial tiles in a workspace and a "
    "reduction kernel, v1 one program a tile over all of K",
    params=(
        Param("M", 4096, min=1, max=1 << 15, doc="rows of A and C"),
        Param("N", 4096, min=1, max=1 << 15, doc="columns of B and C"),
        Param("K", 2048, min=1, max=1 << 15, doc="the reduction length"),
        Param("SPLIT_K", 8, min=1, max=64, doc="v0's K slices (v1 ignores it)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: split-K (8 slices): fp32 partial tiles to a workspace, then a reduction kernel",
            (_PARTIAL, _REDUCE),
            _build("v0"),
        ),
        Version(
            "v1", "fix: no split: one program a tile over all of K, C stored directly", (_MM,), _build("v1")
        ),
    ),
    memory_bytes=_bytes,
)
