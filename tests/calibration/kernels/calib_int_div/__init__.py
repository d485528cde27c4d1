"""Calibration pair — per-element integer division in index arithmetic (issue 36: the integer
work on the ALU/FMA pipes and the conversions/reciprocals on the XU pipe the limiter; the fix
removes it): out = x.permute(0, 2, 1, 3, 4, 5).contiguous() for a 6-d fp16 tensor x of shape
(24, 20, 35, 7, 11, 13) by default (16.8 M elements, none of the sizes a power of two).

Planted problem (v0): a generic N-d gather, one program per 1024 output elements (4 warps):
each element turns its int64 linear index into six coordinates with ``//`` and ``%`` by the
output's sizes, runtime values, and dots them with x's permuted strides. There is no hardware
integer divider: LLVM tests whether both int64 operands fit in 32 bits (they do) and then divides
in 32 bits, each division an I2F, a MUFU.RCP and an F2I (XU pipe, 16 per SM per clock on an H100)
and a dozen IMAD/IADD3/ISETP/SEL (FMA and ALU pipes); five divisions, their remainders and the
64-bit offset arithmetic make ~130 instructions per element, against 2 bytes read and 2 written.
The CUDA C++ Best Practices Guide ("Division and modulo operations": expensive, avoid on the
fast path) and Nsight Compute's instruction-statistics rules name it.

Fix (v1): the permutation leaves the last three dimensions in place and contiguous in both
tensors; collapsed, they are one run of L = 7·11·13 = 1001 elements per row. One program per
(output row, 1024-element chunk): the row's three coordinates are computed once per program
(int32 scalars), the elements copied with consecutive offsets. No division per element.

Model: 0 FLOPs; 2·numel·2 bytes (x read once, out written once).

Expected on an H100 SXM (per design): v1 at the copy rate, 67 MB ≈ 25-30 µs; v0 issue-bound on
its index arithmetic, ≈ numel·130 instructions / (128 per SM per clock × 132 × 1.98 GHz) ≈ 65 µs,
with the XU pipe (15 conversions/reciprocals per element at 16 per SM per clock ≈ 60 µs) close
behind: ≈ 2.5-3×.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

DIMS = (24, 20, 35, 7, 11, 13)


def _numel(p) -> int:
    n = 1
    for k in range(6):
        n *= p[f"d{k}"]
    return n


def _inputs(p, device):
    import torch

    shape = tuple(p[f"d{k}"] for k in range(6))
    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(shape, generator=g, device=device, dtype=torch.float32).half()
    out_shape = (shape[0], shape[2], shape[1], *shape[3:])
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "out": torch.full(out_shape, float("nan"), device=device, dtype=torch.float16)}


def _reference(inputs, p):
    return inputs["x"].permute(0, 2, 1, 3, 4, 5).contiguous()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


_STAGE = StageModel("permute", flops=lambda p: 0.0, bytes=lambda p: 4.0 * _numel(p))

KERNEL = KernelPackage(
    name="calib_int_div",
    description="Calibration (planted: per-element integer division): a 6-d permute whose every element divides "
                "its int64 index by 5 runtime sizes (v0) vs rows of the collapsed contiguous dimensions, coordinates "
                "once per program (v1)",
    params=(*(Param(f"d{k}", d, min=1, max=1 << 12, doc=f"size of x's dimension {k}") for k, d in enumerate(DIMS)),
            DTYPE_PARAM("float16", choices=("float16",))),
    make_inputs=_inputs,
    reference=_reference,
    versions=(Version("v0", "planted: generic N-d gather, int64 // and % by 5 runtime sizes per element, "
                            "1024-element programs, 4 warps", (_STAGE,), _build("v0")),
              Version("v1", "fix: the last three dims collapsed into contiguous rows, coordinates once per "
                            "program in int32, 1024-element chunks, 4 warps", (_STAGE,), _build("v1"))),
    memory_bytes=lambda p: 4.0 * _numel(p),
    tolerance=lambda dtype: 1e-6,  # a copy: exact (one misplaced element of 16.8 M gives ~3e-4)
)
