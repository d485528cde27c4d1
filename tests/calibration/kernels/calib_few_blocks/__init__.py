"""Calibration pair — too few blocks: y = a·x + b over n fp32 elements.

v0 (planted problem): only 16 programs (an H100 has 132 SMs), each looping over a contiguous
n/16 chunk: 116 SMs idle, and 16 SMs cannot pull the DRAM bandwidth. Nsight Compute: grid 16,
waves per SM ≪ 1, low DRAM%.

v1 (the fix): one program per 4096 elements (16 K programs): every SM busy, DRAM near its roof.

Expected on an H100 (n = 2^26): v1 ≈ 512 MB / ~3 TB/s ≈ 180 µs; v0 is limited to 16 SMs'
share of the bandwidth (each SM sustains roughly 20-30 GB/s with one 4-warp program in flight),
so several times slower.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(p["n"], generator=g, device=device, dtype=torch.float32)
    return {"x": x, "y": torch.full((p["n"],), float("nan"), device=device)}


def _reference(inputs, p):
    return inputs["x"].double().mul(2.0).add(1.0).float()


def _v0(inputs, p):
    from .impl import build_v0

    return build_v0(inputs, p)


def _v1(inputs, p):
    from .impl import build_v1

    return build_v1(inputs, p)


_STAGE = StageModel("axpb", flops=lambda p: 2.0 * p["n"], bytes=lambda p: 8.0 * p["n"])

KERNEL = KernelPackage(
    name="calib_few_blocks",
    description="Calibration: y = 2x + 1 with 16 looping programs (v0) vs a full grid (v1)",
    params=(Param("n", 1 << 26, min=1024, max=1 << 30, doc="elements"),
            Param("programs", 16, min=1, max=1 << 20, doc="v0's program count"),
            DTYPE_PARAM("float32", choices=("float32",))),
    make_inputs=_inputs, reference=_reference,
    versions=(Version("v0", "`programs` programs, each looping over a contiguous chunk", (_STAGE,), _v0),
              Version("v1", "one program per 4096 elements", (_STAGE,), _v1)),
    memory_bytes=lambda p: 8.0 * p["n"],
)
