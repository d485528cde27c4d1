"""Calibration pair (thirty-ninth held-back set) — the cutoff of top-p (nucleus) sampling, the number of tokens
kept from each row of probabilities sorted in descending order (the smallest k whose probabilities sum to p),
computed by a running sum over the whole row (every block of the 128k-token vocabulary read, the count of
entries whose preceding mass is below p accumulated), where stopping at the first block after which the mass
reaches p serves: a Triton kernel has no ``break``, so the full-length loop with its masks is the form a first
port takes, and the rest of the row, past the point where the count can no longer change, is read for nothing.
Sources: A. Holtzman et al., "The Curious Case of Neural Text Degeneration" (ICLR 2020: nucleus sampling, the
nucleus a small head of the sorted distribution); the Hugging Face transformers TopPLogitsWarper and vLLM's
sampler (sort, cumulative sum, cutoff); the Triton language reference (``while`` loops with a scalar condition
for a data-dependent trip count); the CUDA C++ Best Practices Guide, "Memory Optimizations" (minimise the data
moved through device memory).

The work: k [R] int32 = the number of entries of each row of probs [R, V] fp32 (sorted descending, each row a
Zipf law with its own exponent in [1.2, 1.8]: nuclei of ~2 to ~2500 tokens) whose exclusive prefix sum is below
p = 0.9, the same in both versions (the same fp32 sums in the same order up to the stopping block).

Planted problem (v0): stage "topp_full_scan": a program a row walks all V / 2048 blocks: c = carry + exclusive
cumsum of the block, count += sum(c < p), carry += sum(block): 4 bytes an entry read, V = 131072: 512 KB a row.
Fix (v1): stage "topp_early_exit": the same block step in a ``while carry < p`` loop: one or two blocks a row.

Model (the needed work, for both): FLOPs 2 per entry read by the fix (a scan add and a compare) ~ 2 R x 4096;
bytes the blocks up to the cutoff (R x 2048 x 4 x ~1.3) and k written: ~1.1e7 at R = 1024.

Expected on an H100/H200 (per design): R = 1024, V = 131072: v0 537 MB at ~4 TB/s: ~130-150 us; v1 ~11 MB
and one or two dependent block loads a program: ~6-12 us: ~10-20x. Cause "over_fetch" (bytes read beyond what
the result needs: the rows' tails past the cutoff); resource "dram".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

P_TOP = 0.9


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    r, v = p["R"], p["V"]
    s = (p["SLO"] / 100.0 + 0.6 * torch.rand(r, 1, generator=g, dtype=torch.float64)).to(device)
    k = torch.arange(1, v + 1, dtype=torch.float64, device=device)[None, :]
    probs = k.log().mul(-s).exp()  # (k)^-s, decreasing along the row
    probs = (probs / probs.sum(1, keepdim=True)).float()
    return {
        "probs": probs,
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((r,), -1, device=device, dtype=torch.int32),
    }


def _reference(inputs, p):
    x = inputs["probs"].double()
    excl = x.cumsum(1) - x
    return (excl < P_TOP).sum(1).to(dtype=inputs["out"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * p["R"] * 4096


def _bytes(p):
    return 4.0 * p["R"] * 2048 * 1.3 + 4.0 * p["R"]


KERNEL = KernelPackage(
    name="calib_topp_scan",
    description="Calibration (held back, set 39; planted: a top-p cutoff scanning every block of each sorted "
    "row where stopping at the first block past p serves): 1024 rows of 131072 fp32 probabilities; v0 the full "
    "scan, v1 a while loop that stops once the mass reaches p",
    params=(
        Param("R", 1024, min=1, max=1 << 16, doc="rows (sequences sampled)"),
        Param("V", 131072, min=1, max=1 << 20, doc="vocabulary"),
        Param(
            "SLO",
            120,
            min=50,
            max=400,
            doc="the smallest Zipf exponent of a row, x 100 (the largest 60 more)",
        ),
        DTYPE_PARAM("int32", choices=("int32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: every block of each row scanned",
            (StageModel("topp_full_scan", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the scan stops at the first block after which the mass reaches p",
            (StageModel("topp_early_exit", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-2,
)
