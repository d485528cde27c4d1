"""Calibration pair (sixteenth held-back set) — the halves of a fused projection copied to contiguous
tensors before a kernel that takes strides: a SwiGLU MLP's fused gate/up projection gives h [N, 2F]
(one GEMM for both), ``gate, up = h.chunk(2, dim=-1)`` gives two views with row stride 2F, and the
user calls ``.contiguous()`` on each before the activation kernel "because Triton kernels want
contiguous inputs": two copy kernels read and write the whole of h once more, although the activation
kernel needs only each row's stride (Triton's tutorials pass ``x.stride(0)`` for this). Sources: the
PyTorch documentation of torch.Tensor.chunk / torch.Tensor.contiguous ("Returns a contiguous in memory
tensor containing the same data": a copy when the tensor is not contiguous) and of "Tensor Views";
Triton's tutorials (fused softmax, layer norm: row strides passed to the kernel); Shazeer, "GLU
Variants Improve Transformer" (2020) for SwiGLU.

The work: h [N, 2F] (N = 16384 tokens, F = 8192, fp16), out [N, F] = silu(gate) · up (fp32 math, fp16
out). The activation kernel: one program per row and 1024-column block (4 warps), loads of gate and
up through a row stride, one store.

Planted problem (v0): stage "copy_gate" (a strided 2-D copy kernel: gate → a contiguous [N, F] buffer),
stage "copy_up" (the same for up), stage "swiglu" on the two contiguous buffers (row stride F).
Fix (v1): stage "swiglu" alone, reading gate and up in h directly (row stride 2F, up at column F).

Model: stage "swiglu": 5 FLOPs an output (the sigmoid's exponential counted once), bytes 3·N·F·itemsize
(gate and up read, out written); each copy stage: no FLOPs, 2·N·F·itemsize (a half read, written).

Expected on an H100 SXM (per design): 256 MB a half; each copy ~0.17-0.19 ms (512 MB at ~2.8-3 TB/s),
the activation ~0.26-0.28 ms (768 MB): v0 ~0.62 ms (1.79 GB), v1 ~0.27 ms: ~2.3x. Cause "over_fetch"
(the copies' 1 GB of traffic: bytes the result does not need), resource "dram".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    dt = getattr(torch, p["dtype"])
    n, f = p["N"], p["F"]
    g = torch.Generator(device="cpu").manual_seed(0)
    h = (torch.randn(n, 2 * f, generator=g) * 2.0).to(device=device, dtype=dt)
    # Poisoned output: a version that does not write every element fails the check.
    return {"h": h, "out": torch.full((n, f), float("nan"), device=device, dtype=dt)}


def _reference(inputs, p):
    import torch

    h = inputs["h"].double()
    f = p["F"]
    gate, up = h[:, :f], h[:, f:]
    return (gate * torch.sigmoid(gate) * up).to(inputs["h"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _half_bytes(p):
    return float(p["N"]) * p["F"] * p.itemsize


_SWIGLU = StageModel("swiglu", flops=lambda p: 5.0 * p["N"] * p["F"], bytes=lambda p: 3.0 * _half_bytes(p))
_COPY_GATE = StageModel("copy_gate", flops=lambda p: 0.0, bytes=lambda p: 2.0 * _half_bytes(p))
_COPY_UP = StageModel("copy_up", flops=lambda p: 0.0, bytes=lambda p: 2.0 * _half_bytes(p))

KERNEL = KernelPackage(
    name="calib_chunk_copies",
    description="Calibration (held back, set 16; planted: the halves of a fused projection copied to "
    "contiguous tensors before a kernel that takes strides): SwiGLU of h [16384, 2 x 8192] fp16; v0 gate and "
    "up each copied to a contiguous buffer, then the activation; v1 the activation reading h's halves "
    "through their row stride",
    params=(
        Param("N", 16384, min=1, max=1 << 20, doc="rows (tokens) of h"),
        Param("F", 8192, min=1, max=1 << 16, doc="the hidden width: h has 2F columns (gate, then up)"),
        DTYPE_PARAM("float16", choices=("float16", "float32")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: gate and up copied to contiguous buffers (two strided copy kernels), then the activation",
            (_COPY_GATE, _COPY_UP, _SWIGLU),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the activation alone, reading gate and up in h through the row stride",
            (_SWIGLU,),
            _build("v1"),
        ),
    ),
    memory_bytes=lambda p: 5.0 * _half_bytes(p),
    tolerance=lambda dtype: 2e-3 if dtype == "float16" else 1e-5,
)
