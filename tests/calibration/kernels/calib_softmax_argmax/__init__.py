"""Calibration pair (eighteenth held-back set) — a softmax computed before an argmax it cannot change: greedy
decoding (or a classifier's prediction) written as ``argmax(softmax(logits))``: the softmax is monotonic in
each row, so the argmax of the probabilities is the argmax of the logits, yet the probabilities are computed
and written out (two reads of the logits, one write of the probabilities) and read back by the argmax. The
fix takes the argmax of the logits: one read. Sources: the greedy search of Hugging Face transformers'
``generate`` (the next token is the argmax of the processed scores; the softmax is taken only to sample),
NVIDIA FasterTransformer / TensorRT-LLM's top-1 sampling (an argmax over the logits, no softmax), Jurafsky &
Martin, "Speech and Language Processing" (3rd ed., ch. 10: greedy decoding picks the argmax of the output
distribution), and the CUDA C++ Best Practices Guide (device-memory bandwidth as the limiter of memory-bound
kernels).

The work: logits [B, V] fp32 (B = 4096 rows, V = 32000: the LLaMA vocabulary; each row a permutation of V
distinct values, so the argmax is unique); out [B] fp32, the index of each row's maximum (exact in fp32
below 2^24; a float output so that the checks can poison it with NaN).

Planted problem (v0): stage "softmax" (one program per row, 8 warps, 2048-column chunks: a pass for the
running maximum and the sum of exponentials, a second pass writing exp(x - max) / sum into probs [B, V]
fp32), then stage "argmax" (one program per row over probs: its maximum's first index).
Fix (v1): stage "argmax" alone, over the logits.

Model: softmax 5 FLOPs an element, bytes 3·B·V·4 (the logits read twice, the probabilities written);
argmax 1 FLOP an element, bytes B·V·4 + 4·B.

Expected on an H100 SXM (per design): each pass over 524 MB ~0.18-0.2 ms: v0 ~0.65-0.8 ms (4 passes, the
second read of a row partly from L2), v1 ~0.18-0.2 ms: ~3-4x. Cause "over_fetch" (the probabilities' write
and read back, and the softmax's reads: bytes the result does not need), resource "dram".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    b, v = p["B"], p["V"]
    g = torch.Generator(device="cpu").manual_seed(0)
    # each row a permutation of V distinct values (v * a + c_row mod V, a coprime to V), so ties cannot occur
    a = 7919 if v % 7919 else 7
    while v > 1 and torch.gcd(torch.tensor(a), torch.tensor(v)).item() != 1:
        a += 2
    c = torch.randint(0, max(v, 1), (b, 1), generator=g)
    ranks = (torch.arange(v)[None, :] * a + c) % max(v, 1)
    logits = ranks.to(torch.float32) * (12.0 / max(v, 1)) - 6.0
    return {
        "logits": logits.to(device),
        "probs": torch.full((b, v), float("nan"), device=device, dtype=torch.float32),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((b,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    return torch.argmax(inputs["logits"], dim=1).to(torch.float32)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _elems(p):
    return float(p["B"]) * p["V"]


_SOFTMAX = StageModel("softmax", flops=lambda p: 5.0 * _elems(p), bytes=lambda p: 12.0 * _elems(p))
_ARGMAX = StageModel("argmax", flops=_elems, bytes=lambda p: 4.0 * _elems(p) + 4.0 * p["B"])

KERNEL = KernelPackage(
    name="calib_softmax_argmax",
    description="Calibration (held back, set 18; planted: a softmax computed before an argmax it cannot "
    "change): greedy decoding over logits [4096, 32000] fp32; v0 softmax written out then argmax of the "
    "probabilities; v1 argmax of the logits",
    params=(
        Param("B", 4096, min=1, max=1 << 20, doc="rows (sequences decoded)"),
        Param("V", 32000, min=1, max=1 << 22, doc="vocabulary"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the softmax written to probs [B, V] (two passes over the logits), then argmax of probs",
            (_SOFTMAX, _ARGMAX),
            _build("v0"),
        ),
        Version("v1", "fix: argmax of the logits (one pass)", (_ARGMAX,), _build("v1")),
    ),
    memory_bytes=lambda p: 8.0 * _elems(p) + 4.0 * p["B"],
    tolerance=lambda dtype: 0.0,
)
