"""Calibration pair — small tiles (DRAFT docstring)."""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    dtype = getattr(torch, params["dtype"])
    M, N, K = params["M"], params["N"], params["K"]
    a = torch.randn(M, K, generator=g, device=device, dtype=torch.float32).to(dtype)
    b = torch.randn(K, N, generator=g, device=device, dtype=torch.float32).to(dtype)
    # Poisoned output: NaN wherever the kernel fails to write shows up in the check.
    c = torch.full((M, N), float("nan"), device=device, dtype=dtype)
    return {"a": a, "b": b, "c": c}


def _reference(inputs, params):
    # fp32 accumulation of the exact products of the fp16/bf16 inputs, rounded to the output dtype.
    return (inputs["a"].double() @ inputs["b"].double()).to(inputs["a"].dtype)


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel(
    "gemm",
    flops=lambda p: 2.0 * p["M"] * p["N"] * p["K"],
    bytes=lambda p: 2.0 * (p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]),
    tensor_cores=True,
)

KERNEL = KernelPackage(
    name="calib_small_tiles",
    description="Calibration (small tiles, low reuse): fp16 GEMM; v0 uses 32x32x32 tiles with 2 warps and no "
                "pipelining, v1 the same kernel with 128x128x64 tiles, 8 warps, 3 stages.",
    params=(
        Param("M", 4096, min=1, max=1 << 15, doc="rows of A and C"),
        Param("N", 4096, min=1, max=1 << 15, doc="columns of B and C"),
        Param("K", 4096, min=1, max=1 << 15, doc="inner dimension"),
        DTYPE_PARAM("float16", choices=("float16", "bfloat16")),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: 32x32x32 tiles, num_warps=2, num_stages=1: 4x the operand bytes per FLOP of v1, "
                      "the tensor pipe waits on loads", (_STAGE,), _build("v0")),
        Version("v1", "fix: the same kernel with 128x128x64 tiles, num_warps=8, num_stages=3",
                (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: 2.0 * (p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]),
)
