"""Calibration pair (third held-back set) — atomics with ordering nobody needs: a scatter-add
written with ``tl.atomic_add``'s default semantics, ``sem="acq_rel"`` (Nsight Compute's warp state
statistics: stalls on memory barriers, "Stall Membar"; CUDA C++ Programming Guide, memory fence
functions and the scopes and orders of atomics: a relaxed atomic is enough when nothing is
published through it).

The work: the gradient of an embedding lookup, ``out.index_add_(0, idx, src)``: N = 2^19 rows of
src [N, D] (D = 128, bf16; fp16 allowed for the CPU interpreter) added into the rows of a fresh
fp32 gradient out [V, D] (V = 2^17) that idx names (uniformly random: ~4 rows per target, little
contention). One program per 16 rows, one atomic add per element (16 per thread at 4 warps); the
stage zeroes out first.

Planted problem (v0): ``tl.atomic_add(ptr, val, mask=mask)`` with the default sem="acq_rel". The
SASS (Triton 3.9, sm_90, read without a GPU) wraps each of a thread's 16 atomics in MEMBAR.ALL.GPU
before (waiting until every earlier access of the thread is visible GPU-wide) and CCTL.IVALL after
(invalidating L1), and issues ATOMG (which returns) instead of REDG: each thread's atomics run one
after another, each waiting a full round trip to L2. No pipe or memory level is busy; the warps
wait on the fences (resource: none).
Fix (v1): sem="relaxed" (only the final sums are read, after the kernel): 16 fire-and-forget REDG
per thread, no fences.

Model: src and idx read once, out written once (bytes N·D·itemsize + 4·N + 4·V·D: 205 MB at the
defaults), one add per element (N·D FLOPs).

Expected on an H100 SXM (per design): v1 is bound by the reads and the L2's reductions, ~60-80 µs;
v0 by the serialised round trips: 2^15 programs of 16 dependent ~1 µs steps, 16 resident per SM
(~2100 at once): ~15 waves x ~16 µs ≈ 250 µs or more: ≥ 3x.
Tolerance: fp32 sums of a few bf16 values, in any order: 1e-5 relative.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    n, d, v = p["N"], p["D"], p["V"]
    src = torch.randn(n, d, generator=g, device=device, dtype=torch.float32).to(dt)
    idx = torch.randint(0, v, (n,), generator=g, device=device, dtype=torch.int32)
    # Poisoned output: the stage zeroes it, so NaN left over would mean it did not.
    return {
        "src": src,
        "idx": idx,
        "out": torch.full((v, d), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    src, idx = inputs["src"].double(), inputs["idx"].long()
    out = torch.zeros(p["V"], p["D"], dtype=torch.float64, device=src.device)
    return out.index_add_(0, idx, src).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(p["N"] * p["D"] * p.itemsize + 4 * p["N"] + 4 * p["V"] * p["D"])


_STAGE = StageModel("scatter_add", flops=lambda p: float(p["N"] * p["D"]), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_atomic_order",
    description="Calibration (held back, set 3; planted: acq_rel atomics where relaxed suffice): an embedding "
    "gradient's scatter-add out.index_add_(0, idx, src) with one tl.atomic_add per element; v0 the default "
    "sem='acq_rel', v1 sem='relaxed'",
    params=(
        Param("N", 1 << 19, min=1, max=1 << 24, doc="rows of src (tokens)"),
        Param("D", 128, min=1, max=1024, doc="row length (embedding width)"),
        Param("V", 1 << 17, min=1, max=1 << 22, doc="rows of out (vocabulary)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: tl.atomic_add with the default sem='acq_rel' (a fence and an L1 invalidation around "
            "every atomic)",
            (_STAGE,),
            _build("v0"),
        ),
        Version("v1", "fix: the same atomics with sem='relaxed'", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-5,
)
