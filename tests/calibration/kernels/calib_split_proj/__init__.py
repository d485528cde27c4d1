"""Calibration pair (twenty-third held-back set) — three projections of one input (Q, K and V of an attention
layer at a small batch) launched as three matrix products, each on its own small grid: every launch fills 32 of
the GPU's 132 SMs for the whole of its K loop, and the three run one after another. The fix concatenates the
weights once ([K, 3N], as a fused QKV projection does) and launches one product of 96 tiles. Sources: the
Triton tutorial "Matrix Multiplication" (one program a tile, the grid its count), the CUDA C++ Best Practices
Guide ("Execution Configuration": enough blocks to keep every multiprocessor busy) and the fused QKV projection
of Megatron-LM / nanoGPT (c_attn: one Linear of 3 x the width).

The work: out [M, 3N] fp32 = X [M, K] fp16 · [Wq | Wk | Wv] ([K, N] fp16 each), M = 512, N = 1024, K = 4096,
fp32 accumulation on the tensor cores, tiles [128, 128], BLOCK_K 64, 8 warps.

Planted problem (v0): stages "proj_q", "proj_k", "proj_v": three launches of 32 programs (4 x 8 tiles), each
writing its third of out's columns.
Fix (v1): stage "proj_qkv": one launch of 96 programs over the concatenated weights (W [K, 3N], concatenated
once outside the timed work, as a model stores a fused projection).

Model: FLOPs 2·M·N·K a projection, bytes X and its W read once and its third of out written once.

Expected on an H100 SXM (per design): each v0 launch about the time of one tile's K loop (~30-45 us), three in a
row ~100-130 us; v1 one wave of 96 tiles ~35-50 us: ~2.5-3x. Cause "few_blocks" (each launch a grid of 32
programs on 132 SMs), resource None.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    m, n, k = p["M"], p["N"], p["K"]
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(m, k, generator=g).to(torch.float16)
    ws = [(torch.randn(k, n, generator=g) / k**0.5).to(torch.float16) for _ in range(3)]
    return {
        "X": x.to(device),
        "Wq": ws[0].to(device),
        "Wk": ws[1].to(device),
        "Wv": ws[2].to(device),
        # The fused layout a model keeps (built once, as the model's own parameter).
        "W": torch.cat(ws, dim=1).contiguous().to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((m, 3 * n), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    x = inputs["X"].double()
    return torch.cat([x @ inputs[w].double() for w in ("Wq", "Wk", "Wv")], dim=1).to(torch.float32)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops1(p):
    return 2.0 * p["M"] * p["N"] * p["K"]


def _bytes1(p):
    return 2.0 * p["M"] * p["K"] + 2.0 * p["K"] * p["N"] + 4.0 * p["M"] * p["N"]


def _flops3(p):
    return 3.0 * _flops1(p)


def _bytes3(p):
    return 2.0 * p["M"] * p["K"] + 3.0 * (2.0 * p["K"] * p["N"] + 4.0 * p["M"] * p["N"])


KERNEL = KernelPackage(
    name="calib_split_proj",
    description="Calibration (held back, set 23; planted: three projections of one input launched as three "
    "small matrix products): out = X [512, 4096] fp16 · [Wq | Wk | Wv] ([4096, 1024] each); v0 three launches "
    "of 32 tiles, v1 one launch of 96 tiles over the concatenated weights",
    params=(
        Param("M", 512, min=1, max=1 << 16, doc="rows of X and out (tokens)"),
        Param("N", 1024, min=1, max=1 << 16, doc="columns of each projection"),
        Param("K", 4096, min=1, max=1 << 16, doc="the reduction (model width)"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: three launches (Q, K, V), 32 programs each",
            tuple(StageModel(s, flops=_flops1, bytes=_bytes1) for s in ("proj_q", "proj_k", "proj_v")),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: one launch over the concatenated weights, 96 programs",
            (StageModel("proj_qkv", flops=_flops3, bytes=_bytes3),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes3,
    tolerance=lambda dtype: 1e-2,
)
