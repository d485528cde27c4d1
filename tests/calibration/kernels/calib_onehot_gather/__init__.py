"""Calibration pair (eighth held-back set) — a row gather written as a one-hot matrix product, as code
written for TPUs (or copied from a VQ-VAE's ``F.one_hot(idx, K).float() @ codebook``) does: the tensor cores
multiply a matrix of zeros and ones by the whole codebook to copy one row per output (CUDA C++ Best Practices
Guide, "Instruction optimization": do the least work that gives the result; the Triton tutorials: gathers
are pointer arithmetic, tl.dot is for products; Nsight Compute's pipe utilisation: the tensor pipe busy with
work whose result is a copy).

The work: a VQ codebook lookup, out[i, :] = codebook[ids[i], :], for N = 131072 codes (a batch of latents)
into a V = 2048 x D = 256 bf16 codebook (fp16/fp32 allowed for the CPU interpreter), out bf16. One program of
8 warps per BLOCK_M = 256 codes and BLOCK_D = 128 columns (grid 512 x 2... as N/256 x D/128).

Planted problem (v0): for each BLOCK_V = 64 slice of the codebook, the one-hot tile (ids[:, None] == v[None,
:]) as bf16 [256, 64] times the codebook slice [64, 128], accumulated in fp32 with tl.dot: 2·N·V·D = 1.37e11
tensor FLOPs (one product in V is non-zero, so the result is the row exactly).
Fix (v1): the same program, tiles and grid loading codebook[ids[:, None], d[None, :]] (rows gathered from
L2, the 1 MB codebook resident there) and storing them; no loop over V.

Model: what the result needs: the ids read once, the output written once and the codebook read once (bytes
4·N + 2·N·D + 2·V·D = 68 MB at the defaults); no FLOPs (a gather).

Expected on an H100 SXM (per design): v0 1.37e11 FLOPs at ~600-700 TFLOP/s (bf16 MMA, the one-hot built in
registers by compares and converts each slice, the codebook slices from L2 at 1/BLOCK_M byte per FLOP, ~2.5
TB/s) → ~0.2 ms; v1 ~68 MB → ~25-30 µs: ~7x. v0's limiter is the tensor pipe (resource "tensor"); the fix
removes work the result does not need (cause "move_work").
Tolerance: exact (one non-zero product per output, fp32 accumulation of zeros; the output is the row).
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench, L2 flushed) v0 304 µs (wgmma, 255
registers, no spills, 80 KB shared memory; 450 TFLOP/s, ~45 % of the bf16 dense peak: the one-hot's compares and
selects, 64 selp.b16 a slice, share the issue slots), v1 28 µs (2.4 TB/s): 10.7x; recorded event medians v0 419
µs, v1 27 µs (+1451 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    codebook = torch.randn(p["V"], p["D"], generator=g, device=device, dtype=torch.float32).to(dt)
    ids = torch.randint(0, p["V"], (p["N"],), generator=g, device=device, dtype=torch.int32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    out = torch.full((p["N"], p["D"]), float("nan"), device=device, dtype=dt)
    return {"codebook": codebook, "ids": ids, "out": out}


def _reference(inputs, p):
    return inputs["codebook"][inputs["ids"].long()]


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(4 * p["N"] + p.itemsize * (p["N"] * p["D"] + p["V"] * p["D"]))


_STAGE = StageModel("lookup", flops=lambda p: 0.0, bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_onehot_gather",
    description="Calibration (held back, set 8; planted: a gather written as a one-hot matrix product): a VQ "
    "codebook lookup codebook[ids]; v0 one_hot(ids) @ codebook with tl.dot, v1 the rows gathered",
    params=(
        Param("N", 131072, min=1, max=1 << 24, doc="codes looked up"),
        Param("V", 2048, min=1, max=1 << 20, doc="codebook entries"),
        Param("D", 256, min=16, max=1024, doc="code width (a power of two; BLOCK_D = min(D, 128))"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: one_hot(ids) @ codebook on the tensor cores (tl.dot over the whole codebook)",
            (_STAGE,),
            _build("v0"),
        ),
        Version("v1", "fix: codebook[ids], the rows gathered", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
