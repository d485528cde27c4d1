"""Calibration pair (fortieth held-back set) — per-tensor symmetric int8 fake quantisation (the quantise-dequantise
step of quantisation-aware training and of FP8/int8 calibration: s = absmax(x) / 127, y = s * clamp(round(x / s),
-127, 127)) written as one Triton kernel in which every program first computes the whole tensor's absmax by
scanning all of x, then quantises its own block: the scale is a global statistic, and a one-kernel port makes each
program rediscover it, so the tensor is read once per program (through L2) instead of once; a reduction to one
partial maximum per program followed by the quantise kernel (each program reducing the partials) serves. Sources:
the CUDA C++ Best Practices Guide, "Memory Optimizations" (minimise redundant global-memory traffic) and its
reduction discussion (partial results per block, then a second pass over the partials); M. Harris, "Optimizing
Parallel Reduction in CUDA" (NVIDIA, 2007: two-level reduction); B. Jacob et al., "Quantization and Training of
Neural Networks for Efficient Integer-Arithmetic-Only Inference" (CVPR 2018: fake quantisation with a per-tensor
scale); PyTorch's torch.fake_quantize_per_tensor_affine and NVIDIA Transformer Engine's amax reduction before
the FP8 cast (the amax computed once, in its own reduction).

The work: y [N] fp32 = the fake-quantised x [N] fp32 (N = 2^21, 8 MB: the tensor fits in L2), the same arithmetic
in both versions: amax = max |x| (exact in any order), inv = 127 / amax, scale = amax / 127, y = scale *
clamp(floor(x * inv + 0.5), -127, 127).

Planted problem (v0): stage "fakequant_rescan": 256 programs of 8192 elements (8 warps); each loops over all of x
in blocks of 4096 (max |x| carried in a vector), then quantises its own 8192 elements: 256 x 8 MB = 2.1 GB read,
the first pass from DRAM and the rest from L2.
Fix (v1): stage "absmax_partial": the same 256 programs each reduce their own block to one partial maximum
(256 floats); stage "fakequant_apply": each program reads the 256 partials (1 KB), takes their maximum and
quantises its block: x read twice (16 MB) and y written (8 MB).

Model (the needed work, for both): FLOPs ~6 an element; bytes x read once and y written: 8 N = 1.7e7 (the fix's
partial-max stage 4 N).

Expected on an H100/H200 (per design): v0 2.1 GB through L2 at ~7-10 TB/s: ~0.2-0.35 ms; v1 two small kernels,
~24 MB of DRAM traffic and a few us of launch: ~10-15 us: ~15-30x. Cause "over_fetch" (bytes moved beyond what the
result needs: the tensor re-read by every program); resource "l2" (the re-reads hit L2).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    n = p["N"]
    x = torch.randn(n, generator=g) * (1.0 + 3.0 * torch.rand(n, generator=g))  # heavier tails: a real absmax
    return {
        "x": x.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((n,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    x = inputs["x"]
    amax = x.abs().max()
    inv = torch.tensor(127.0, device=x.device) / amax
    scale = amax / torch.tensor(127.0, device=x.device)
    return torch.clamp(torch.floor(x * inv + 0.5), -127.0, 127.0) * scale


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 6.0 * p["N"]


def _bytes(p):
    return 8.0 * p["N"]


def _bytes_partial(p):
    return 4.0 * p["N"]


KERNEL = KernelPackage(
    name="calib_absmax_rescan",
    description="Calibration (held back, set 40; planted: per-tensor fake quantisation whose every program "
    "rescans the whole tensor for its absmax, where one partial maximum per program and a second kernel serve): "
    "2^21 fp32 elements; v0 one kernel, every program scanning all of x; v1 partial maxima, then the quantise kernel",
    params=(
        Param("N", 1 << 21, min=1, max=1 << 24, doc="elements of the tensor"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: every program scans the whole tensor for the absmax, then quantises its block",
            (StageModel("fakequant_rescan", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: one partial maximum per program, then each program reduces the partials and quantises its block",
            (
                StageModel("absmax_partial", flops=lambda p: 1.0 * p["N"], bytes=_bytes_partial),
                StageModel("fakequant_apply", flops=_flops, bytes=_bytes),
            ),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-3,  # a division rounded differently may move a rare x * inv across a .5
)
