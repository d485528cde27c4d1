"""Calibration pair (second held-back set) — fp32 inputs and output where bf16 suffices, in a
memory-bound op (Nsight Compute's memory workload analysis: DRAM-bound, "consider a narrower data
type"; CUDA C++ Best Practices Guide, "Minimize data transfer": move fewer bytes).

The work: a gated residual update of a transformer's residual stream, out = h + g · y for h and y
of shape [rows, C] (rows = 16384, C = 4096: n = 2^26 elements) and a per-channel gate g [C]
(adaLN-Zero / LayerScale style). The model runs in bf16 (``dtype``, the model's dtype; fp16
allowed for the CPU interpreter); the math inside the kernel is fp32 in both versions.

Planted problem (v0): the residual stream and the branch output were left in float32 (an autocast
region upcast them; a common accident): the kernel reads h and y as fp32 and writes out as fp32,
12 bytes per element where the model's dtype needs 6. The kernel is a plain streaming kernel
(one program per row and 1024-column block, 4 warps, 16-byte vector loads): at the DRAM roof, but
moving twice the bytes.
Fix (v1): the same kernel on the bf16 tensors (the same values: the inputs are bf16-representable
and the fp32 copies hold them exactly), writing bf16: fp32 math, bf16 I/O.

Model (the model's dtype, both versions): 2 FLOPs per element (multiply, add), bytes 3·n·itemsize
(h and y read once, out written once; the gate's 8 KB ignored): 403 MB at the defaults. v0 moves
805 MB: DRAM bytes ÷ model = 2.0.

Expected on an H100 SXM (per design; ~3.0 TB/s streaming, read + write): v0 805 MB ≈ 270 µs,
v1 403 MB ≈ 135 µs: ≈ 2x. Both at ~90 % of DRAM bandwidth; the limiter of v0 is DRAM (resource
"dram"), its fix a narrower type.
Tolerance: the output's dtype (bf16: 1e-2 relative L2; v0's fp32 output is far inside it).
Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-25): quick check (do_bench median, L2 flushed) v0 279 µs,
v1 143 µs (1.95x); recorded event medians v0 278 µs, v1 142 µs (+96 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(0)
    rows, c = p["rows"], p["C"]
    h = torch.randn(rows, c, generator=g, device=device, dtype=torch.float32).to(dt)
    y = torch.randn(rows, c, generator=g, device=device, dtype=torch.float32).to(dt)
    gate = (0.1 * torch.randn(c, generator=g, device=device, dtype=torch.float32)).to(dt)
    # The same values in float32 (exact): what v0 was handed. Poisoned outputs: NaN where unwritten.
    return {
        "h": h,
        "y": y,
        "gate": gate,
        "h32": h.float(),
        "y32": y.float(),
        "gate32": gate.float(),
        "out": torch.full((rows, c), float("nan"), device=device, dtype=dt),
        "out32": torch.full((rows, c), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    h, y, g = inputs["h"].double(), inputs["y"].double(), inputs["gate"].double()
    return (h + g[None, :] * y).to(inputs["h"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return 3.0 * p["rows"] * p["C"] * p.itemsize


_STAGE = StageModel("residual", flops=lambda p: 2.0 * p["rows"] * p["C"], bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_wide_io",
    description="Calibration (held back, set 2; planted: fp32 I/O where bf16 suffices): out = h + gate * y on a "
    "[rows, C] residual stream; v0 reads and writes float32 copies, v1 the model's bf16 tensors (fp32 math)",
    params=(
        Param("rows", 16384, min=1, max=1 << 20, doc="rows (tokens)"),
        Param("C", 4096, min=1, max=1 << 16, doc="channels"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: h, y and out in float32 (12 bytes per element moved; the model's dtype needs 6)",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1", "fix: the same kernel on the bf16 tensors, bf16 output, fp32 math", (_STAGE,), _build("v1")
        ),
    ),
    memory_bytes=_bytes,
)
