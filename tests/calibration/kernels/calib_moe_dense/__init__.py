"""Calibration pair (seventeenth held-back set) — every expert applied to every token, the router's choice
applied afterwards: a mixture-of-experts layer with top-1 routing written "densely": each token's hidden
state is multiplied by every expert's weight matrix and the result of the expert the router chose is kept
(a one-hot mask over the experts), so E - 1 of every E products are thrown away. The tokens are already
grouped by expert (the permutation a MoE layer makes before its expert GEMMs); a grouped GEMM (each
row tile multiplied by its own expert's weights only) gives the same output with 1/E of the MMAs.
Sources: Fedus, Zoph & Shazeer, "Switch Transformers" (JMLR 2022: top-1 routing, tokens dispatched to
their expert); Gale et al., "MegaBlocks: Efficient Sparse Training with Mixture-of-Experts" (MLSys 2023:
grouped / block-sparse expert computation instead of padded or dense-masked forms); the dense "compute
every expert and mask" form found in simple MoE implementations (e.g. ``torch.einsum('td,edf->tef')``
followed by a gather of the chosen expert).

The work: x [T, D] (T = 16384 tokens, D = 1024) fp16, sorted by expert; ids [T] int32 (non-decreasing,
T/E tokens an expert: E = 8); gate [T] fp32 (the router's probability of the chosen expert); W [E, D, F]
(F = 1024) fp16. out [T, F] = gate[t] · x[t] @ W[ids[t]] (fp32 accumulation, fp16 out).

Planted problem (v0): stage "dense_experts": one program per 128x128 tile of out (8 warps, 3 stages,
BLOCK_K 64) loops over all E experts, a full K loop of tl.dot for each, keeping the tile rows whose
expert is e (tl.where): 2·T·D·F·E FLOPs of MMAs.
Fix (v1): stage "grouped_experts": the same tiling; each tile loops only over the experts its rows belong
to (ids of its first and last row: one expert unless the tile straddles a boundary): 2·T·D·F FLOPs.

Model: flops 2·T·D·F·E (v0) / 2·T·D·F (v1) on tensor cores; bytes (x + W + out) once: T·D + E·D·F + T·F
elements (+ ids and gate).

Expected on an H100 SXM (per design): v1 34 GFLOP ~60-80 µs; v0 275 GFLOP ~0.45-0.6 ms: ~6-8x. Cause
"move_work" (the products of the experts a token was not routed to: a costlier method than the grouped
GEMM for the same result), resource "tensor".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    dt = getattr(torch, p["dtype"])
    t, d, f, e = p["T"], p["D"], p["F"], p["E"]
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(t, d, generator=g)
    w = torch.randn(e, d, f, generator=g) / d**0.5
    ids = (torch.arange(t, dtype=torch.int64) * e // t).to(torch.int32)  # sorted, T/E tokens an expert
    gate = 0.5 + 0.5 * torch.rand(t, generator=g)
    return {
        "x": x.to(device=device, dtype=dt),
        "w": w.to(device=device, dtype=dt),
        "ids": ids.to(device),
        "gate": gate.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((t, f), float("nan"), device=device, dtype=dt),
    }


def _reference(inputs, p):
    import torch

    x, w, ids, gate = (
        inputs["x"].double(),
        inputs["w"].double(),
        inputs["ids"].long(),
        inputs["gate"].double(),
    )
    out = torch.empty(x.shape[0], w.shape[2], dtype=torch.float64, device=x.device)
    for e in range(w.shape[0]):
        rows = ids == e
        out[rows] = x[rows] @ w[e]
    return (out * gate[:, None]).to(inputs["x"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return (
        float(p["T"]) * p["D"] + float(p["E"]) * p["D"] * p["F"] + float(p["T"]) * p["F"]
    ) * p.itemsize + 8.0 * p["T"]


_DENSE = StageModel(
    "dense_experts",
    flops=lambda p: 2.0 * p["T"] * p["D"] * p["F"] * p["E"],
    bytes=_bytes,
    tensor_cores=True,
)
_GROUPED = StageModel(
    "grouped_experts", flops=lambda p: 2.0 * p["T"] * p["D"] * p["F"], bytes=_bytes, tensor_cores=True
)

KERNEL = KernelPackage(
    name="calib_moe_dense",
    description="Calibration (held back, set 17; planted: every expert applied to every token, the router's "
    "choice applied afterwards): a top-1 MoE layer, x [16384, 1024] fp16 grouped by expert, 8 experts "
    "[1024, 1024]; v0 every tile multiplied by all 8 experts' weights, the chosen one kept; v1 a grouped GEMM",
    params=(
        Param("T", 16384, min=1, max=1 << 20, doc="tokens (sorted by expert)"),
        Param("D", 1024, min=1, max=1 << 15, doc="model width (the GEMMs' K)"),
        Param("F", 1024, min=1, max=1 << 15, doc="expert output width"),
        Param("E", 8, min=1, max=256, doc="experts (T/E tokens each)"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: every 128x128 output tile multiplied by all E experts' weights (E K loops of tl.dot), "
            "the rows' chosen expert kept",
            (_DENSE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: a grouped GEMM: each tile multiplied only by the expert(s) its rows were routed to",
            (_GROUPED,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 2e-2,
)
