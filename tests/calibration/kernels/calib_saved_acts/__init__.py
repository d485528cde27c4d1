"""Calibration pair (ninth held-back set) — an inference pass through a fused training kernel that still
writes the tensors its backward would read: the pre-activation and the tanh term stored in fp32 for a backward
that never runs (CUDA C++ Best Practices Guide, "Minimize data transfer" / memory optimizations: every byte
written to global memory costs DRAM bandwidth whether or not it is read; Nsight Compute's memory workload
analysis: DRAM write bytes far above the outputs').

The work: the bias + GELU (tanh approximation) of a transformer MLP, y = gelu_tanh(x + bias), x [M, N] bf16
(fp16 allowed for the CPU interpreter), bias [N] fp32, y in x's dtype, fp32 math; M = 16384 tokens, N = 8192
features. One program of 8 warps per row block BLOCK = 2048 columns of one row (grid M x N/2048).

Planted problem (v0): the kernel written for training (SAVE=True, as Megatron/Apex-style fused bias-GELU kernels
save for their backward): besides y it stores h = x + bias and t = tanh(sqrt(2/pi)·(h + 0.044715 h^3)), both
fp32, into buffers the caller never reads (an evaluation loop under torch.no_grad() calling the training
kernel): per element 2 bytes read and 2 + 4 + 4 = 10 written where 2 + 2 suffice, 3x the DRAM bytes.
Fix (v1): SAVE=False: the same kernel, grid and math, y alone stored.

Model: x read and y written once, the bias read once (bytes 2·itemsize·M·N + 4·N = 537 MB at the defaults);
~30 FP32 operations an element (the cube, the tanh by exp2 and a division), counted as 8 "flops" an element.

Expected on an H100 SXM (per design): v1 537 MB → ~0.18 ms at ~3 TB/s; v0 1.61 GB → ~0.54 ms: ~3x. v0's
limiter is DRAM (resource "dram": mostly the writes); the fix removes bytes the result does not need beyond the
model's (cause "over_fetch": the measured DRAM bytes 3x the model's). Near the "intermediate round trip" class
(an intermediate written and read back by a second kernel): here nothing is read back, the stores are dead.
Tolerance: bf16/fp16 output: 1e-2 relative (norm); fp32 math in both versions, the same values.
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench, L2 flushed) v0 582 µs (922 GB/s of the
model's bytes, ~2.8 TB/s of the bytes it moves), v1 190 µs (2.8 TB/s): 3.07x; recorded event medians v0 583 µs,
v1 208 µs (+180 %).
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    m, n = p["M"], p["N"]
    x = (torch.randn(m, n, generator=g, device=device, dtype=torch.float32) * 2).to(dt)
    bias = torch.randn(n, generator=g, device=device, dtype=torch.float32) * 0.5
    # The training kernel's saved tensors (written by v0 only, never read) and the poisoned output: NaN
    # wherever a version fails to write shows up in the check.
    return {
        "x": x,
        "bias": bias,
        "h": torch.empty(m, n, device=device, dtype=torch.float32),
        "t": torch.empty(m, n, device=device, dtype=torch.float32),
        "out": torch.full((m, n), float("nan"), device=device, dtype=dt),
    }


def _reference(inputs, p):
    import torch

    h = inputs["x"].float() + inputs["bias"][None, :]
    return torch.nn.functional.gelu(h, approximate="tanh").to(inputs["x"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(2 * p.itemsize * p["M"] * p["N"] + 4 * p["N"])


_STAGE = StageModel("bias_gelu", flops=lambda p: float(8 * p["M"] * p["N"]), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_saved_acts",
    description="Calibration (held back, set 9; planted: activations saved for a backward that never runs): "
    "inference bias + GELU(tanh) of a 16384 x 8192 bf16 activation; v0 also stores h and tanh in fp32, v1 y only",
    params=(
        Param("M", 16384, min=1, max=1 << 20, doc="rows (tokens)"),
        Param("N", 8192, min=1, max=1 << 16, doc="columns (features)"),
        Param("dtype", "bfloat16", choices=("bfloat16", "float16"), doc="x's and y's dtype"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the training kernel, h and tanh stored in fp32 for a backward that never runs",
            (_STAGE,),
            _build("v0"),
        ),
        Version("v1", "fix: y alone stored", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-2,
)
