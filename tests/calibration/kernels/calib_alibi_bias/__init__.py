"""Calibration pair (tenth held-back set) — a position bias read from a materialised [B, H, S, S] tensor where
it is a function of the indices: attention with a symmetric ALiBi bias (Press et al.; encoders use
-slope_h·|i - j|) that the model code builds in float32 for every batch and head, merged into the additive
mask the way Hugging Face style code prepares ``attn_mask``, and passes to a fused attention kernel, which
then streams it from DRAM next to Q, K and V (CUDA C++ Best Practices Guide, "Minimize data transfer"; the
FlashAttention papers: the S x S matrices are what a fused kernel keeps out of memory).

The work: O = softmax(Q Kᵀ / sqrt(D) - slope_h·|i - j|) V for B = 2, H = 16 heads, S = 4096, D = 64 (fp16;
fp32 allowed), slope_h = 2^(-8(h + 1)/H). A flash-attention forward: one program of 4 warps per 128 queries of
one (batch, head), the keys in blocks of 64, online softmax in fp32.

Planted problem (v0): the bias loaded per tile from the materialised fp32 tensor: 4 bytes per score, 2.1 GB a
call (~27x the bytes of Q, K, V and O together), 64 FLOPs of the GEMMs per bias byte, under the H100's ~300
FLOP/B ridge.
Fix (v1): the same kernel computing the bias in registers from the indices and the H slopes
(BIAS_TENSOR=False): -slope_h·|i - j|, the same fp32 values.

Model: Q, K, V read once, O written once, the slopes (bytes 4·B·H·S·D·itemsize + 4·H = 67 MB at the defaults);
FLOPs 4·B·H·S²·D = 1.37e11 (the two GEMMs, tensor cores).

Expected on an H100 SXM (per design): v1 ~1.37e11 FLOPs at ~300-400 TFLOP/s (a Triton flash forward at D = 64)
≈ 0.35-0.45 ms; v0 ≥ 2.15 GB at ~3 TB/s ≈ 0.7 ms, its GEMMs waiting on the bias tiles: ~2x. v0 is DRAM-bound
(resource "dram") on bytes the result does not need from memory (cause "over_fetch").
Tolerance: fp16 probabilities into the second GEMM (TF32 GEMMs in fp32): 5e-3.
"""

import math

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def slopes(h):
    import torch

    return torch.tensor([2.0 ** (-8.0 * (i + 1) / h) for i in range(h)], dtype=torch.float32)


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    b, h, s, d = p["B"], p["H"], p["S"], p["D"]
    dt = getattr(torch, p["dtype"])
    q, k, v = (torch.randn(b, h, s, d, generator=g).to(device=device, dtype=dt) for _ in range(3))
    sl = slopes(h).to(device)
    pos = torch.arange(s, device=device, dtype=torch.float32)
    dist = (pos[None, :] - pos[:, None]).abs()
    # The materialised additive mask: the bias for every (batch, head), float32, as the model code builds it.
    bias = torch.empty(b, h, s, s, device=device, dtype=torch.float32)
    for i in range(h):
        bias[:, i] = -(sl[i] * dist)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    out = torch.full((b, h, s, d), float("nan"), device=device, dtype=dt)
    return {"q": q, "k": k, "v": v, "slopes": sl, "bias": bias, "out": out}


def _reference(inputs, p):
    import torch

    q, k, v, bias = inputs["q"], inputs["k"], inputs["v"], inputs["bias"]
    out = torch.empty_like(inputs["out"])
    scale = 1.0 / math.sqrt(p["D"])
    for bi in range(q.shape[0]):
        for hi in range(q.shape[1]):
            s = (q[bi, hi].float() @ k[bi, hi].float().T) * scale + bias[bi, hi]
            out[bi, hi] = (torch.softmax(s, dim=-1) @ v[bi, hi].float()).to(out.dtype)
    return out


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(4 * p["B"] * p["H"] * p["S"] * p["D"] * p.itemsize + 4 * p["H"])


def _flops(p):
    return float(4 * p["B"] * p["H"] * p["S"] * p["S"] * p["D"])


_STAGE = StageModel("attention", flops=_flops, bytes=_bytes, tensor_cores=True)

KERNEL = KernelPackage(
    name="calib_alibi_bias",
    description="Calibration (held back, set 10; planted: a position bias read from a materialised tensor): "
    "flash attention with a symmetric ALiBi bias; v0 loads the bias from a [B, H, S, S] float32 tensor, v1 "
    "computes it from the indices and the head's slope",
    params=(
        Param("B", 2, min=1, max=64, doc="batch"),
        Param("H", 16, min=1, max=128, doc="heads"),
        Param("S", 4096, min=1, max=16384, doc="sequence length (queries = keys)"),
        Param("D", 64, min=16, max=128, doc="head dimension (16, 32, 64 or 128)"),
        Param("dtype", "float16", choices=("float16", "float32"), doc="Q, K, V and O dtype"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: the bias loaded from the materialised fp32 tensor", (_STAGE,), _build("v0")),
        Version("v1", "fix: the bias computed from the indices and the slopes", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: _bytes(p) + float(4 * p["B"] * p["H"] * p["S"] * p["S"]),
    tolerance=lambda dtype: 5e-3,
)
