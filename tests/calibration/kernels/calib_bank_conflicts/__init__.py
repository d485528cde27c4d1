"""Calibration pair — shared-memory bank conflicts: a batched transpose out[b] = x[b].T of B
row-major matrices of 128 rows x 128 bytes (128x32 fp32 by default; 128x64 fp16/bf16), 16 KB
each, B = 16384 by default (268 MB in, 268 MB out).

One program per matrix, which it handles as ONE flat 1-D tensor: loaded contiguously (16-byte
vector loads), permuted inside the program, stored contiguously, so global traffic is
coalesced and identical in both versions. Both versions move the permutation through shared
memory; only the shared-memory access pattern differs:

Planted problem (v0): ``tl.gather(x, idx, axis=0)`` with idx[j] = (j % 128)·C + j // 128.
A gather whose axis spans several warps is lowered by storing the source row-major into
shared memory, unswizzled and unpadded (Triton's GatherOpToLLVM, emitGatherInShared), then
loading ``smem[idx]``. The lanes of a warp produce consecutive outputs j (consecutive rows p of
one column q) and so read words p·C + q, 128 bytes apart: all in one bank. Every shared load
instruction is a 32-way conflict (32 wavefronts instead of 1).
Fix (v1): the same permutation written as reshape -> ``tl.trans`` -> reshape, i.e. the
compiler's layout conversion through shared memory, which Triton swizzles so that each warp's
accesses spread over the 32 banks. (So plain Triton does swizzle a tl.trans away: the conflict
is planted through the gather path, whose shared layout is not swizzled.)

Model: 0 FLOPs; 2·B·16 KB bytes (x read once, out written once): 537 MB at the defaults.

Counters Nsight Compute should show for v0 (measured at the defaults): shared-memory bank
conflicts l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum = 65.8 M of 70.2 M shared
wavefronts (94 %; the loads alone are 2^26 / 32 lanes = 2.1 M instructions x 32 wavefronts =
67.1 M); L1/TEX throughput 94 %; stalls mio_throttle 54 % and barrier 25 % of the warps' cycles;
DRAM 50 %, DRAM bytes = the model (no over-fetch), SM throughput 5 %, 32 registers, no spills,
9.6 waves. v1: 0.33 M conflicts of 4.6 M wavefronts, DRAM 86 %, L1 21 %.

Expected speed-up on an H100: v1 streams at the copy bandwidth (537 MB / ~2.9 TB/s ≈ 185 µs; a
torch copy of the same bytes took 182 µs); v0 is bound by its shared wavefronts: one per SM
clock, 70.2 M / (132 SMs x ~1.98 GHz) ≈ 270 µs plus the barrier between the store and the
gather → ~310 µs: ~1.7x. A bank-conflict estimate of 94 % of v0's shared time overstates the
gain: v0 still has to move its DRAM bytes (v1's 185 µs is the floor).
fp16 / bf16 (128x64 matrices, the same bytes): v0 ~303 µs, v1 ~184 µs, also 32-way.

Measured (H100 SXM, torch 2.11, Triton 3.6, triton.testing.do_bench median, two rounds,
2026-11-24): v0 311-314 µs, v1 184.5-185.1 µs → 1.68x; 8 warps instead of 4: 309 / 184 µs.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

ROWS = 128          # rows of each matrix
ROW_BYTES = 128     # bytes of each row: the 32 four-byte banks once (32 fp32 or 64 fp16/bf16 columns)
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}


def shape(p):
    """(B, R, C) of x: B matrices of 128 rows of 128 bytes (16 KB each)."""
    return p["B"], ROWS, ROW_BYTES // ITEMSIZE[p["dtype"]]


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    B, R, C = shape(params)
    dtype = getattr(torch, params["dtype"])
    x = torch.randn(B, R, C, generator=g, device=device, dtype=torch.float32).to(dtype)
    out = torch.full((B, C, R), float("nan"), device=device, dtype=dtype)
    return {"x": x, "out": out}


def _reference(inputs, params):
    return inputs["x"].transpose(1, 2).contiguous()


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel("transpose", flops=lambda p: 0.0, bytes=lambda p: 2.0 * p["B"] * ROWS * ROW_BYTES)

KERNEL = KernelPackage(
    name="calib_bank_conflicts",
    description="Calibration (shared-memory bank conflicts): batched transpose of 128x32 fp32 (16 KB) matrices; v0 "
                "permutes through unswizzled shared memory (tl.gather: 32-way conflicts), v1 through the "
                "compiler's swizzled layout conversion (tl.trans).",
    params=(
        Param("B", 1 << 14, min=1, max=1 << 18,
              doc="matrices of 128 rows x 128 bytes (128x32 fp32, 128x64 fp16/bf16: 16 KB), one program each"),
        DTYPE_PARAM("float32", choices=("float32", "float16", "bfloat16")),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: tl.gather through row-major shared memory; each warp's 32 loads fall in one "
                      "bank (32-way conflicts)", (_STAGE,), _build("v0")),
        Version("v1", "fix: the same loads, stores and grid; the permutation as tl.trans (swizzled shared "
                      "memory, conflict-free)", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: 2.0 * p["B"] * ROWS * ROW_BYTES,
)
