"""Calibration pair (fourteenth held-back set) — a variance computed in two passes over data too large for the
chip: per-channel mean and variance (BatchNorm's batch statistics, a feature-standardisation step, a
monitoring hook's activation statistics) of a [C, M] tensor whose rows are millions long, computed the
textbook two-pass way: one pass for the mean, a second over the same data for the sum of squared deviations
(the numerically safe form, chosen over the one-pass sum of squares, which cancels). The data (1 GB) is
twenty times the L2: the second pass reads it all from DRAM again. Welford's update (a running mean and M2
per lane, merged across lanes and programs with Chan et al.'s pairwise formula) is as safe and reads the
data once; it is what PyTorch's own batch_norm_collect_statistics and var_mean kernels use. Sources: B. P.
Welford, "Note on a method for calculating corrected sums of squares and products", Technometrics 4(3),
1962; Chan, Golub & LeVeque, "Algorithms for computing the sample variance: analysis and recommendations",
The American Statistician 37(3), 1983 (the pairwise merge); Triton's layer-norm tutorial (a mean loop, then
a variance loop over the same row); PyTorch's Welford-based batch-norm statistics (aten/src/ATen/native/cuda/
Normalization.cuh).

The work: C = 64 channels of M = 2^22 fp32 values (fp16 allowed), x = 3 + N(0, 1) (an offset mean: the
one-pass sum of squares would cancel, so both versions keep a safe form); out[0] = mean, out[1] = population
variance (fp32). Each row split into SPLIT = 64 chunks of 65536 values, one program a chunk (C x SPLIT = 4096
programs of 4 warps), BLOCK = 4096 values a step; partial results [C, SPLIT] in a small scratch buffer, and
a finishing kernel of C programs in both versions.

Planted problem (v0): stage "sum" (partial sums a chunk), stage "sqdev" (each chunk program takes the
row's mean from the partial sums and sums (x - mean)^2 over its chunk: the second full read of x), stage
"finish" (mean and variance a channel).
Fix (v1): stage "welford" (per lane: delta = x - mean; mean += delta / n; M2 += delta (x - mean), n the
step count, equal in every lane; lanes merged with Chan's formula), stage "finish" (the chunks merged the
same way).

Model: x read once, out written once: the pass over x C M itemsize bytes (and 3 C M FLOPs) in each stage
that reads x; the finishing stage a few KB.

Expected on an H100 SXM (per design): each pass over x ~0.33-0.4 ms at ~2.8-3.2 TB/s; v0 two passes ~0.7
ms, v1 one ~0.36 ms: ~1.9-2x. Cause "over_fetch" (x read from DRAM twice where once gives the same
statistics), resource "dram".
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    c, m, split = p["C"], p["M"], p["SPLIT"]
    base = torch.randn(m, generator=g).to(device)  # one row's draws (fast to make), rolled and scaled per row
    x = torch.empty(c, m, dtype=dt, device=device)
    for i in range(c):
        x[i] = (3.0 + (1.0 + 0.01 * i) * torch.roll(base, 7919 * i)).to(dt)
    return {
        "x": x,
        "part_a": torch.empty(c, split, dtype=torch.float32, device=device),
        "part_b": torch.empty(c, split, dtype=torch.float32, device=device),
        # Poisoned output: a version that does not write fails the check.
        "out": torch.full((2, c), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    x = inputs["x"]
    out = torch.empty(2, x.shape[0], dtype=torch.float64, device=x.device)
    for i in range(x.shape[0]):
        r = x[i].double()
        out[0, i] = r.mean()
        out[1, i] = ((r - out[0, i]) ** 2).mean()
    return out.float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(p["C"] * p["M"] * p.itemsize + 8 * p["C"])


def _pass(name):
    return StageModel(
        name, flops=lambda p: 3.0 * p["C"] * p["M"], bytes=lambda p: float(p["C"] * p["M"] * p.itemsize)
    )


_FINISH = StageModel(
    "finish", flops=lambda p: 6.0 * p["C"] * p["SPLIT"], bytes=lambda p: 8.0 * p["C"] * (p["SPLIT"] + 1)
)

KERNEL = KernelPackage(
    name="calib_two_pass_var",
    description="Calibration (held back, set 14; planted: a variance computed in two passes over data too "
    "large for the chip): per-channel mean and variance of a [64, 2^22] fp32 tensor; v0 a mean pass then a "
    "squared-deviation pass, v1 one Welford pass (Chan's merge)",
    params=(
        Param("C", 64, min=1, max=4096, doc="channels (rows)"),
        Param("M", 1 << 22, min=16, max=1 << 28, doc="values a channel (a multiple of SPLIT x BLOCK)"),
        Param("SPLIT", 64, min=1, max=1024, doc="chunks (programs) a row"),
        Param("dtype", "float32", choices=("float32", "float16"), doc="x dtype (fp32 statistics)"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: a mean pass, then a squared-deviation pass over x",
            (_pass("sum"), _pass("sqdev"), _FINISH),
            _build("v0"),
        ),
        Version("v1", "fix: one Welford pass (Chan's merge)", (_pass("welford"), _FINISH), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-5,
)
