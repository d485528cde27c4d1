"""Calibration pair — register spills: a row softmax over an fp32 matrix [M, N] (N = 16384).

v0 (planted problem): one warp per row holds the whole row in registers: 16384 / 32 = 512
values per thread, twice the 255 registers a thread can have, so the compiler spills to local
memory (Triton's n_spills > 0; Nsight Compute: local-memory load/store bytes, a large share of
all L1 traffic). One warp per program also means few warps per SM.

v1 (the fix): the same single-pass kernel with 16 warps per row: 32 values per thread, no spill.
Both read each row once and write it once (DRAM bytes ≈ the model in both).

Expected on an H100 (M = 8192): v1 ≈ 1 GB / ~3 TB/s ≈ 350 µs; v0 several times slower
(every spilled value goes to local memory and back, through L1/L2).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(p["M"], p["N"], generator=g, device=device, dtype=torch.float32)
    return {"x": x, "out": torch.full((p["M"], p["N"]), float("nan"), device=device)}


def _reference(inputs, p):
    return torch_softmax(inputs["x"])


def torch_softmax(x):
    import torch

    return torch.softmax(x.double(), dim=-1).float()


def _v0(inputs, p):
    from .impl import build

    return build(inputs, p, warps=1)


def _v1(inputs, p):
    from .impl import build

    return build(inputs, p, warps=16)


_STAGE = StageModel("softmax", flops=lambda p: 5.0 * p["M"] * p["N"], bytes=lambda p: 8.0 * p["M"] * p["N"])

KERNEL = KernelPackage(
    name="calib_spill",
    description="Calibration: row softmax with a whole 16K row per warp (v0: spills) vs 16 warps per row (v1)",
    params=(Param("M", 8192, min=1, max=1 << 16, doc="rows"),
            Param("N", 16384, min=16, max=1 << 15, doc="row length (a power of two)"),
            DTYPE_PARAM("float32", choices=("float32",))),
    make_inputs=_inputs, reference=_reference,
    versions=(Version("v0", "one warp per row: 512 values per thread, spilled", (_STAGE,), _v0),
              Version("v1", "16 warps per row: 32 values per thread, no spill", (_STAGE,), _v1)),
    memory_bytes=lambda p: 8.0 * p["M"] * p["N"],
)
