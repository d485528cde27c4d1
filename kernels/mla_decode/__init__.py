"""mla_decode: DeepSeek-style multi-head latent attention, decode phase, weights absorbed (Triton).

Shapes: queries ``q[b, s, h, d+p]`` (``d`` latent "nope" part, ``p`` rotary part), one latent
KV cache ``kv[b, t, d+p]`` shared by all ``h`` heads (keys are the whole ``d+p`` row, values
its first ``d`` columns), output ``o[b, s, h, d]``. Every query row (``s·h`` of them per
batch) attends to all ``t`` cached tokens (the ``s`` new tokens are already in the cache, no
mask), with softmax scale ``1/sqrt(d+p)`` as in FlashMLA's tests.

Two stages (split-KV, the flash-decoding scheme):

1. ``attend``: each program takes one batch, a block of query rows and one split of the
   ``t`` tokens; it computes ``softmax(q·kᵀ)·v`` over its split with an online softmax and
   writes a float32 partial output and its log-sum-exp.
2. ``combine``: per (batch, row), the partials of all splits are merged with weights
   ``exp(lse_i − max lse)`` and written in the output dtype.

Models (``R = b·s·h`` query rows, ``S`` splits of the version):

- attend: FLOPs ``2·R·t·(d+p)`` (q·kᵀ) + ``2·R·t·d`` (p·v), on tensor cores; bytes: q and the
  KV cache read once, partials (``R·S·(d+1)·4``) written.
- combine: FLOPs ``3·R·S·d``; bytes: partials read, ``o`` written.

At the defaults (b=32, s=16, t=4096, h=128, d=512, p=64, bf16) the 2048 query rows of a
batch share each KV row: ~2000 FLOP/byte, compute-bound. With ``s=1, h=16`` it is ~30
FLOP/byte: memory-bound on the KV cache.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version, default_tolerance

# The split heuristic aims at this many programs (two waves on a 132-SM H100). It is a fixed
# design constant, not read from the device, so the byte models are a function of the params.
TARGET_PROGRAMS = 264
MIN_SPLIT_TOKENS = 256


def rows(p):
    return p["s"] * p["h"]


def split_len(p, splits, multiple=64):
    """Tokens per split, rounded up to ``multiple`` so tiles never straddle two splits."""
    n = -(-p["t"] // splits)
    return -(-n // multiple) * multiple


def num_splits(p, block_rows, target=TARGET_PROGRAMS, one_wave=False):
    """Splits of the ``t`` tokens for a grid of ``b × cdiv(rows, block_rows)`` programs: enough to
    reach ``target`` programs (``one_wave``: the most that stay within ``target``), each split at
    least MIN_SPLIT_TOKENS long (or all of ``t``). Counted after rounding the split length, so no
    split is ever empty."""
    progs = p["b"] * -(-rows(p) // block_rows)
    want = max(1, target // progs if one_wave else -(-target // progs))
    most = max(1, p["t"] // MIN_SPLIT_TOKENS)
    return -(-p["t"] // split_len(p, min(want, most)))


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    dtype = getattr(torch, params["dtype"])
    b, s, t, h, d, p = (params[k] for k in ("b", "s", "t", "h", "d", "p"))
    q = torch.randn(b, s, h, d + p, generator=g, device=device, dtype=torch.float32).to(dtype)
    kv = torch.randn(b, t, d + p, generator=g, device=device, dtype=torch.float32).to(dtype)
    o = torch.full((b, s, h, d), float("nan"), device=device, dtype=dtype)
    return {"q": q, "kv": kv, "o": o}


def torch_mla(q, kv, d, compute_dtype=None):
    """MLA decode in PyTorch: ``softmax(q·kvᵀ / sqrt(d+p)) · kv[..., :d]`` with the rows (s, h)
    flattened. ``compute_dtype=torch.float32`` is the accuracy reference (as FlashMLA's tests);
    ``None`` keeps the input dtype for the matmuls (cuBLAS) with a float32 softmax: the fast
    PyTorch baseline the benchmark also reports."""
    import torch

    b, s, h, dp = q.shape
    x = q.reshape(b, s * h, dp)
    k = kv
    if compute_dtype is not None:
        x, k = x.to(compute_dtype), k.to(compute_dtype)
    scores = torch.bmm(x, k.transpose(1, 2)) * (dp ** -0.5)
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(k.dtype)
    out = torch.bmm(probs, k[..., :d])
    return out.reshape(b, s, h, d).to(q.dtype)


def _reference(inputs, params):
    import torch

    return torch_mla(inputs["q"], inputs["kv"], params["d"], compute_dtype=torch.float32)


def _tolerance(dtype):
    # float32 tl.dot runs in TF32 on tensor cores.
    return 2e-3 if dtype == "float32" else default_tolerance(dtype)


def _memory_bytes(p):
    size = p.itemsize
    qkv = (rows(p) * p["b"] * (p["d"] + p["p"]) + p["b"] * p["t"] * (p["d"] + p["p"]) + rows(p) * p["b"] * p["d"]) * size
    partials = p["b"] * rows(p) * num_splits(p, 1) * (p["d"] + 1) * 4
    return float(qkv + partials)


def v2_launch(p):
    """v2's shape-aware launch, from a sweep of 52 + 54 configurations on an H100 (see
    docs/kernels/mla_decode.md): with enough programs, 64 rows × 64 tokens, 8 warps, 2 stages
    (compute-bound); otherwise 16 rows × 32 tokens, 4 warps, 3 stages, and as many splits as fit
    in one wave of 132 programs (a 1.2-wave grid of 160 ran 8 % slower than 128 programs)."""
    if p["b"] * -(-rows(p) // 64) >= TARGET_PROGRAMS // 2 and rows(p) >= 64:
        return {"BLOCK_H": 64, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2, "target": TARGET_PROGRAMS,
                "one_wave": False}
    return {"BLOCK_H": 16, "BLOCK_N": 32, "num_warps": 4, "num_stages": 3, "target": TARGET_PROGRAMS // 2,
            "one_wave": True}


def _splits_of(version):
    if version == "v0":
        return lambda p: num_splits(p, 1)
    if version == "v1":
        return lambda p: num_splits(p, 16)
    # v2, v3
    return lambda p: num_splits(p, v2_launch(p)["BLOCK_H"], v2_launch(p)["target"], v2_launch(p)["one_wave"])


def _stages(version):
    splits = _splits_of(version)

    def attend_bytes(p):
        R = p["b"] * rows(p)
        return float((R * (p["d"] + p["p"]) + p["b"] * p["t"] * (p["d"] + p["p"])) * p.itemsize
                     + R * splits(p) * (p["d"] + 1) * 4)

    def combine_bytes(p):
        R = p["b"] * rows(p)
        return float(R * splits(p) * (p["d"] + 1) * 4 + R * p["d"] * p.itemsize)

    return (
        StageModel("attend", flops=lambda p: 2.0 * p["b"] * rows(p) * p["t"] * (2 * p["d"] + p["p"]),
                   bytes=attend_bytes, tensor_cores=version != "v0"),
        StageModel("combine", flops=lambda p: 3.0 * p["b"] * rows(p) * splits(p) * p["d"], bytes=combine_bytes),
    )


def _build(version):
    def build(inputs, params):
        from . import impl

        return impl.BUILDERS[version](inputs, params)
    return build


KERNEL = KernelPackage(
    name="mla_decode",
    description="DeepSeek-style MLA decode (absorbed weights): q[b,s,h,d+p] attends a shared latent KV cache "
                "kv[b,t,d+p]; split-KV partial attention, then a combine stage.",
    params=(
        Param("b", 32, min=1, max=4096, doc="batch (sequences)", cpu_default=1),
        Param("s", 16, min=1, max=128, doc="query tokens per sequence (1 = plain decode, >1 = speculative)", cpu_default=1),
        Param("t", 4096, min=1, max=1 << 20, doc="tokens in the KV cache", cpu_default=128),
        Param("h", 128, min=1, max=1024, doc="query heads (all share the one latent KV head)", cpu_default=16),
        Param("d", 512, min=16, max=1024, doc="latent (no-rope) width; values are kv[..., :d]", cpu_default=128),
        Param("p", 64, min=16, max=256, doc="rotary (rope) width", cpu_default=32),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32"), cpu_default="float32"),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "straightforward: one program per (batch, query row, split); q·k and p·v as CUDA-core "
                      "dot products (tl.sum), so every head re-reads the KV split", _stages("v0"), _build("v0")),
        Version("v1", "head grouping: 16 query rows per program share each KV tile; q·kᵀ and p·v on "
                      "tensor cores (tl.dot), the latent tile loaded once serves as key and value",
                _stages("v1"), _build("v1")),
        Version("v2", "shape-aware launch from an H100 sweep: 64 rows × 64 tokens, 8 warps, 2 stages when "
                      "compute-bound; 16 × 32, 4 warps, 3 stages and one wave of splits when memory-bound",
                _stages("v2"), _build("v2")),
        Version("v3", "launch order: the row blocks of one batch are adjacent in the grid, so the programs in "
                      "flight share one batch's KV cache in L2 instead of each streaming a different batch's",
                _stages("v3"), _build("v3")),
    ),
    memory_bytes=_memory_bytes,
    tolerance=_tolerance,
)
