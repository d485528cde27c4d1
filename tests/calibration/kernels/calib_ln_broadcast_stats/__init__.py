"""Calibration pair (twenty-seventh held-back set) — a two-kernel layer norm (statistics, then normalisation) whose
statistics kernel stores each row's mean and reciprocal standard deviation broadcast over the row, as fp32 [M, N]
tensors (the shape of the input, as ``x.mean(-1, keepdim=True).expand_as(x)`` materialised would be, or as code
ported from an elementwise framework that wants operands of one shape), and whose normalisation kernel reads them
back element by element, where one fp32 per row for each (the Triton tutorial's Mean [M] and Rstd [M]) gives the
same result: the broadcast copies are written and read back, 16 bytes an element against the 4 bytes an element
of the input's two fp16 reads and the output's write. The same outputs. Sources: the Triton tutorial "Layer
Normalization" (Mean and Rstd stored per row, [M]); the CUDA C++ Best Practices Guide ("Minimize data transfer"
between global memory and the device); Ba et al., "Layer Normalization" (2016).

The work: Y [M, N] fp16 = (X - mean_r) * rstd_r * w + b for X [8192, 4096] fp16, w, b [N] fp16, eps = 1e-5.

Planted problem (v0): stage "ln_stats_bcast" reads X (64 MiB, a second pass in L2) and writes mean and rstd as
fp32 [M, N] (2 x 128 MiB); stage "ln_norm_bcast" reads X and both broadcast tensors (64 + 256 MiB) and writes Y
(64 MiB): ~704 MiB of DRAM traffic.
Fix (v1): stages "ln_stats" / "ln_norm": the same kernels with mean and rstd one fp32 a row ([M], 64 KiB):
~192 MiB (X read twice, Y written once).

Model (the needed work, for both): ~8 FLOPs an element; bytes: X read by each stage and Y written (the stats
stage X, the norm stage X and Y).

Expected on an H100/H200 (per design): v1 ~50-60 us, v0 ~180-200 us (704 MiB at ~3.7-4 TB/s): ~3-3.5x. Cause
"over_fetch" (bytes moved at DRAM beyond what the result needs: the broadcast statistics' stores and re-reads),
resource "dram".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    m, n = p["M"], p["N"]
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = (0.5 + 2.0 * torch.randn(m, n, generator=gen)).to(torch.float16)
    w = (1.0 + 0.1 * torch.randn(n, generator=gen)).to(torch.float16)
    b = (0.1 * torch.randn(n, generator=gen)).to(torch.float16)
    return {
        "X": x.to(device),
        "W": w.to(device),
        "B": b.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((m, n), float("nan"), device=device, dtype=torch.float16),
    }


def _reference(inputs, p):
    import torch

    x = inputs["X"].double()
    y = torch.nn.functional.layer_norm(x, (p["N"],), inputs["W"].double(), inputs["B"].double(), eps=1e-5)
    return y.to(torch.float16)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops_stats(p):
    return 3.0 * p["M"] * p["N"]


def _flops_norm(p):
    return 5.0 * p["M"] * p["N"]


def _bytes_stats(p):
    return 2.0 * p["M"] * p["N"]


def _bytes_norm(p):
    return 4.0 * p["M"] * p["N"] + 4.0 * p["N"]


def _bytes(p):
    return _bytes_stats(p) + _bytes_norm(p)


KERNEL = KernelPackage(
    name="calib_ln_broadcast_stats",
    description="Calibration (held back, set 27; planted: a layer norm's row statistics stored broadcast as fp32 "
    "[M, N] tensors and read back): Y = LayerNorm(X) for X [8192, 4096] fp16, a statistics kernel then a "
    "normalisation kernel; v0 mean and rstd written and read as [M, N], v1 one fp32 a row",
    params=(
        Param("M", 8192, min=1, max=1 << 20, doc="rows of X"),
        Param("N", 4096, min=1, max=1 << 16, doc="normalised features (columns of X)"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: mean and rstd stored broadcast over each row (fp32 [M, N]) and read back",
            (
                StageModel("ln_stats_bcast", flops=_flops_stats, bytes=_bytes_stats),
                StageModel("ln_norm_bcast", flops=_flops_norm, bytes=_bytes_norm),
            ),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: mean and rstd one fp32 a row",
            (
                StageModel("ln_stats", flops=_flops_stats, bytes=_bytes_stats),
                StageModel("ln_norm", flops=_flops_norm, bytes=_bytes_norm),
            ),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 2e-3,
)
