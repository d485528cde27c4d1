"""vector_add: z = x + y over ``n`` elements — the bandwidth-bound "hello world".

Model: n FLOPs (one add per element); 3·n·itemsize bytes (read x, read y, write z).
Arithmetic intensity is 1/(3·itemsize) FLOP/byte, far left of any GPU's ridge point, so the
roof is DRAM bandwidth.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    dtype = getattr(torch, params["dtype"])
    n = params["n"]
    x = torch.randn(n, generator=g, device=device, dtype=torch.float32).to(dtype)
    y = torch.randn(n, generator=g, device=device, dtype=torch.float32).to(dtype)
    # Poisoned output: NaN wherever the kernel fails to write shows up in the check.
    z = torch.full((n,), float("nan"), device=device, dtype=dtype)
    return {"x": x, "y": y, "z": z}


def _reference(inputs, params):
    return (inputs["x"].double() + inputs["y"].double()).to(inputs["x"].dtype)


def _build_v0(inputs, params):
    from .impl import build_v0

    return build_v0(inputs, params)


def _build_v1(inputs, params):
    from .impl import build_v1

    return build_v1(inputs, params)


_STAGE = StageModel(
    "add",
    flops=lambda p: float(p["n"]),
    bytes=lambda p: 3.0 * p["n"] * p.itemsize,
)

KERNEL = KernelPackage(
    name="vector_add",
    description="Element-wise z = x + y (Triton). Memory-bound: the roof is DRAM bandwidth.",
    params=(
        Param("n", 1 << 24, min=1, max=1 << 32, doc="number of elements", cpu_default=1 << 16),
        DTYPE_PARAM("float32"),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "one program per 1024 elements, 4 warps (the Triton tutorial kernel)", (_STAGE,), _build_v0),
        Version("v1", "autotuned block size (1K-16K elements) and warps; 16-byte vector loads", (_STAGE,), _build_v1),
    ),
    memory_bytes=lambda p: 3.0 * p["n"] * p.itemsize,
)
