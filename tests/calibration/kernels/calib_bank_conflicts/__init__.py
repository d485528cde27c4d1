"""Calibration pair — shared-memory bank conflicts (DRAFT)."""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

R, C = 128, 32   # rows, columns of each matrix: a row is 32 fp32 words = 128 bytes = the 32 banks


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(params["B"], R, C, generator=g, device=device, dtype=torch.float32)
    out = torch.full((params["B"], C, R), float("nan"), device=device, dtype=torch.float32)
    return {"x": x, "out": out}


def _reference(inputs, params):
    return inputs["x"].transpose(1, 2).contiguous()


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel("transpose", flops=lambda p: 0.0, bytes=lambda p: 2.0 * 4 * p["B"] * R * C)

KERNEL = KernelPackage(
    name="calib_bank_conflicts",
    description="Calibration (shared-memory bank conflicts): batched transpose of 128x32 fp32 matrices; v0 "
                "permutes through unswizzled shared memory (tl.gather: 32-way conflicts), v1 through the "
                "compiler's swizzled layout conversion (tl.trans).",
    params=(
        Param("B", 1 << 14, min=1, max=1 << 18, doc="matrices of 128x32 fp32 (16 KB each), one program each"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: tl.gather through row-major shared memory; each warp's 32 loads fall in one "
                      "bank (32-way conflicts)", (_STAGE,), _build("v0")),
        Version("v1", "fix: the same loads, stores and grid; the permutation as tl.trans (swizzled shared "
                      "memory, conflict-free)", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: 2.0 * 4 * p["B"] * R * C,
)
