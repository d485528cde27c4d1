"""matmul: C[M, N] = A[M, K] @ B[K, N] with FP32 accumulation (Triton).

Model: 2·M·N·K FLOPs; (M·K + K·N + M·N)·itemsize bytes (each operand read once, C written
once). At 4096³ in bf16 that is ~1365 FLOP/byte, right of the H100 ridge (~295): the roof
is tensor-core throughput.
"""

from kprof_mcp.kernel_api import DTYPE_PARAM, KernelPackage, Param, StageModel, Version, default_tolerance


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    dtype = getattr(torch, params["dtype"])
    M, N, K = params["M"], params["N"], params["K"]
    a = torch.randn(M, K, generator=g, device=device, dtype=torch.float32).to(dtype)
    b = torch.randn(K, N, generator=g, device=device, dtype=torch.float32).to(dtype)
    c = torch.full((M, N), float("nan"), device=device, dtype=dtype)
    return {"a": a, "b": b, "c": c}


def _reference(inputs, params):
    # FP32 accumulation on upcast inputs: the kernel's own contract.
    return (inputs["a"].float() @ inputs["b"].float()).to(inputs["a"].dtype)


def _tolerance(dtype):
    # A float32 tl.dot runs in TF32 on tensor cores: ~3e-4 relative error is expected.
    return 2e-3 if dtype == "float32" else default_tolerance(dtype)


def _build_v0(inputs, params):
    from .impl import build_v0

    return build_v0(inputs, params)


def _build_v1(inputs, params):
    from .impl import build_v1

    return build_v1(inputs, params)


_STAGE = StageModel(
    "matmul",
    flops=lambda p: 2.0 * p["M"] * p["N"] * p["K"],
    bytes=lambda p: float(p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]) * p.itemsize,
    tensor_cores=True,
)

KERNEL = KernelPackage(
    name="matmul",
    description="Dense C = A @ B (Triton, FP32 accumulate). Compute-bound at large sizes: the roof is tensor-core peak.",
    params=(
        Param("M", 4096, min=1, max=65536, doc="rows of A and C"),
        Param("N", 4096, min=1, max=65536, doc="columns of B and C"),
        Param("K", 4096, min=1, max=65536, doc="reduction dimension"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32")),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "row-major launch order, fixed 128x128x64 tiles, 8 warps, 3 stages", (_STAGE,), _build_v0),
        Version("v1", "grouped (swizzled) launch order for L2 reuse, autotuned tiles/warps/stages", (_STAGE,), _build_v1),
    ),
    memory_bytes=lambda p: float(p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]) * p.itemsize,
    tolerance=_tolerance,
)
