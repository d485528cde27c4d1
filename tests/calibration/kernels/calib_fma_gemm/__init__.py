"""Calibration pair — tensor cores idle: C = A @ B in fp32 (DRAFT docstring)."""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    M, N, K = params["M"], params["N"], params["K"]
    a = torch.randn(M, K, generator=g, device=device, dtype=torch.float32)
    b = torch.randn(K, N, generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever the kernel fails to write shows up in the check.
    c = torch.full((M, N), float("nan"), device=device, dtype=torch.float32)
    return {"a": a, "b": b, "c": c}


def _reference(inputs, params):
    return (inputs["a"].double() @ inputs["b"].double()).float()


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel(
    "gemm",
    flops=lambda p: 2.0 * p["M"] * p["N"] * p["K"],
    bytes=lambda p: 4.0 * (p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]),
    tensor_cores=True,
)

KERNEL = KernelPackage(
    name="calib_fma_gemm",
    description="Calibration (tensor cores idle): fp32 GEMM; v0's tl.dot(input_precision='ieee') runs on the "
                "FP32 FMA pipes, v1 is the same kernel and tiles with input_precision='tf32' (tensor cores).",
    params=(
        Param("M", 4096, min=1, max=1 << 15, doc="rows of A and C"),
        Param("N", 4096, min=1, max=1 << 15, doc="columns of B and C"),
        Param("K", 4096, min=1, max=1 << 15, doc="inner dimension"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: tl.dot(input_precision='ieee'): exact fp32 products on the FMA pipes, tensor "
                      "cores idle", (_STAGE,), _build("v0")),
        Version("v1", "fix: the same kernel, tiles and grid with input_precision='tf32': the dot on the tensor "
                      "cores", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: 4.0 * (p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]),
    # TF32 rounds each operand to a 10-bit mantissa: ~3e-4 relative L2 error on random data.
    tolerance=lambda dtype: 2e-3,
)
