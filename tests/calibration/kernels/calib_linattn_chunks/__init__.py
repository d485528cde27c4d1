"""Calibration pair (thirty-seventh held-back set) — causal linear attention (no softmax: o_i = sum over j <= i
of (q_i . k_j) v_j, the form of "Transformers are RNNs" with the identity feature map) computed in its parallel
(quadratic, attention-like) form, a [L, L] score matrix a head built block by block and multiplied into V, where
the chunkwise recurrent form serves: the past summarised in a [D, D] state S = sum k_j v_j^T carried chunk to
chunk, each chunk's own rows by the parallel form. The quadratic form costs O(L^2 D) a head, the chunkwise
O(L D^2 + L C D): at L = 4096, D = 64 ~16x fewer MMAs. Sources: A. Katharopoulos et al., "Transformers are RNNs:
Fast Autoregressive Transformers with Linear Attention" (ICML 2020), section 3.2-3.4 (the causal masking as a
cumulative sum, the recurrent form); Y. Sun et al., "Retentive Network" (2023), section 2.1 (parallel,
recurrent and chunkwise forms); S. Yang et al., "Gated Linear Attention Transformers with Hardware-Efficient
Training" (2024), section 3 (the chunkwise form on tensor cores); the Triton fused-attention tutorial (the
block loop over keys).

The work: O [BH, L, D] fp32 = causal linear attention of Q, K, V [BH, L, D] fp16 (no normaliser), the same
result in both versions up to fp16 rounding of the operands of the second product (P in v0, S in v1).

Planted problem (v0): stage "linattn_quadratic": a program a block of 128 queries; for each key block of 64 at
or before the diagonal (the later ones skipped: no MMA on a zero tile) s = q k^T, the causal mask, o += s v:
BH x (L^2 / 2) x D x 4 FLOPs (7.0e10 at BH = 32).
Fix (v1): stage "linattn_chunks": a program a head and a 16-wide slice of V walks the L / 64 chunks: o = mask(q
k^T) v + q S, S += k^T v (the state in fp32 registers).

Model (the needed work, for both): the chunkwise form's FLOPs 2 x BH x L x D x (C + 3 D) with C = 64 (the
chunk's own [C, C] block and the three state products); bytes Q, K, V read (fp16), O written (fp32): 10 BH L D.

Expected on an H100/H200 (per design): BH = 32, L = 4096, D = 64: v0 7.0e10 FLOPs of fp16 MMAs at ~200-300
TFLOP/s: ~0.25-0.4 ms; v1 ~4e9 FLOPs (its qk^T recomputed for each of the 4 V slices), 128 programs each a chain
of 64 chunk steps: ~40-70 us: ~4-8x. Cause "move_work" (the needed result by a costlier method: the
quadratic form's ~16x MMAs); resource "tensor" (the MMAs and their operand loads).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

CHUNK = 64


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    bh, n, d = p["BH"], p["L"], p["D"]
    q = (torch.randn(bh, n, d, generator=g) / d**0.5).half()
    k = (torch.randn(bh, n, d, generator=g) / d**0.5).half()
    v = torch.randn(bh, n, d, generator=g).half()
    return {
        "Q": q.to(device),
        "K": k.to(device),
        "V": v.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((bh, n, d), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    q, k, v = (inputs[n].double().cpu() for n in ("Q", "K", "V"))
    s = torch.tril(q @ k.transpose(1, 2))
    return (s @ v).float().to(inputs["Q"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * p["BH"] * p["L"] * p["D"] * (CHUNK + 3 * p["D"])


def _bytes(p):
    return 10.0 * p["BH"] * p["L"] * p["D"]


KERNEL = KernelPackage(
    name="calib_linattn_chunks",
    description="Calibration (held back, set 37; planted: causal linear attention in its quadratic parallel "
    "form where the chunkwise recurrent form serves): Q, K, V [32, 4096, 64] fp16; v0 the masked score blocks "
    "multiplied into V, v1 64-row chunks carrying a [64, 64] state",
    params=(
        Param("BH", 32, min=1, max=1024, doc="batch x heads"),
        Param("L", 4096, min=1, max=1 << 16, doc="sequence length"),
        Param("D", 64, min=16, max=128, doc="head dimension (a power of two, at least 16)"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the quadratic (parallel) form, every key block at or before the diagonal",
            (StageModel("linattn_quadratic", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the chunkwise recurrent form, a [D, D] state carried over 64-row chunks",
            (StageModel("linattn_chunks", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-2,
)
