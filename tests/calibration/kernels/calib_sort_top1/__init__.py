"""Calibration pair (seventh held-back set) — a mixture-of-experts router that sorts every token's expert
scores to take the best one, where a single max reduction gives it (CUDA C++ Best Practices Guide,
"Instruction optimization": do the least work that gives the result; Nsight Compute's instruction
statistics and issue slots: a compare-and-swap network where one reduction suffices).

The work: top-1 routing (Switch-style) over T = 131072 tokens' logits for E = 256 experts (bf16): for
each token the index of its highest logit (the first among equal ones, as torch.argmax) and that
expert's softmax probability, 1 / Σ_e exp(x_e - max). One program of 4 warps per 16 tokens; each logit
packed with its index into one int32 key (the bf16 bits made order-preserving in the high half, E-1-e
in the low half) so that the largest key is the best expert, ties to the lowest index.

Planted problem (v0): the keys of each token sorted, ``tl.sort(keys, dim=1)`` (a bitonic network of
log2(E)(log2(E)+1)/2 = 36 compare-and-swap rounds over all 256 keys: each round a xor-sum exchange with
the partner lane, a compare and two selects per key), and the last column taken.
Fix (v1): ``tl.max(keys, axis=1)``: one reduction (8 rounds); the softmax denominator, the loads and
stores unchanged.

Model: the logits read once, the index (int32) and probability (fp32) written once (bytes T·E·2 + 8·T =
68 MB at the defaults); FLOPs: the softmax's exp, subtract and add per logit (3·T·E).

Expected on an H100 SXM (per design): v1 ~68 MB → ~25-30 µs; v0 ~36 rounds x 64 keys per thread-pair
exchange, ~10 integer/shuffle instructions per key per round → ~0.5 G warp instructions → ~0.5-1 ms:
≥ 10x. v0's limiter is the issue slots (integer compares, selects and xors on the ALU, exchanges with
the partner lane: no single pipe alone at its peak, resource "issue"); the fix removes that work (cause
"move_work": the work not needed for the result).
Tolerance: the index exact, the probability 1e-5 relative (fp32 sum of exp in another order).
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 249 µs
(PTX: 1524 selp, 960 setp, 520 shfl.sync.bfly; 72 registers), v1 42.4 µs (40 shuffles, no selp; 40
registers): 5.9x; recorded event medians v0 374 µs, v1 48.8 µs (+666 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    t, e = p["T"], p["E"]
    dt = getattr(torch, p["dtype"])
    x = (2.0 * torch.randn(t, e, generator=g, device=device, dtype=torch.float32)).to(dt)
    # Poisoned outputs: NaN / -1 wherever a version fails to write shows up in the check.
    gate = torch.full((t,), float("nan"), device=device, dtype=torch.float32)
    idx = torch.full((t,), -1, device=device, dtype=torch.int32)
    return {"x": x, "gate": gate, "idx": idx}


def _reference(inputs, p):
    import torch

    x = inputs["x"].float()
    idx = torch.argmax(x, dim=1)  # the first of equal maxima
    gate = 1.0 / torch.exp(x.double() - x.double().amax(dim=1, keepdim=True)).sum(dim=1)
    return gate.float(), idx.to(torch.int32)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(p["T"] * p["E"] * 2 + 8 * p["T"])


_STAGE = StageModel("router", flops=lambda p: 3.0 * p["T"] * p["E"], bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_sort_top1",
    description="Calibration (held back, set 7; planted: a router sorting every token's expert scores to "
    "take the best): top-1 expert and its softmax probability; v0 tl.sort of (score, index) keys, v1 tl.max",
    params=(
        Param("T", 131072, min=1, max=1 << 24, doc="tokens"),
        Param("E", 256, min=2, max=1024, doc="experts (a power of two)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: every token's 256 keys sorted (bitonic network) to take the last",
            (_STAGE,),
            _build("v0"),
        ),
        Version("v1", "fix: one max reduction over the keys", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-5,
)
