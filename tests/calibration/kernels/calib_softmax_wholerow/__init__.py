"""Calibration pair (forty-first held-back set) — the fused-softmax kernel of the Triton tutorial (one program
a row, the whole row loaded as one block, BLOCK = next_power_of_2(V), its max, exponentials and sum taken in
registers) applied to rows as wide as a language model's vocabulary (V = 131072): each of the program's 512
threads must hold 256 values of the row and 256 exponentials, far beyond its registers, so the compiler keeps
them in local memory (a ~2 KB stack a thread, stored and reloaded at every pass over the row), where an online
softmax over 4096-wide chunks (a running maximum and a rescaled running sum, then a second pass writing the
normalised values) serves: a few registers a thread, the row read twice from DRAM. Sources: the Triton tutorial
"Fused Softmax" (tutorials/02-fused-softmax.py: "each program loads a row of the input matrix X ... the whole
row must fit" and its num_warps heuristic, 16 warps for rows of 4096 and more); M. Milakov and N. Gimelshein,
"Online normalizer calculation for softmax" (2018); the CUDA C++ Best Practices Guide, "Local Memory"
(automatic variables that do not fit in registers are placed in local memory, as slow as global memory); the
Nsight Compute "local memory spilling" rule.

The work: out [R, V] fp32 = softmax(x) along each row of x [R, V] fp32 (R = 256, V = 131072, logits 3 N(0,
1)); the same values to fp32 rounding in both versions.

Planted problem (v0): stage "softmax_whole_row": a program a row, BLOCK = 131072, 16 warps: the tile's 256
values a thread and its exponentials spilled (a 2080-byte stack a thread at 32 registers when compiled for
sm_90), the spill traffic through L1, L2 and DRAM on top of the row's read and write.
Fix (v1): stage "softmax_online_chunks": a program a row, 8 warps, 32 chunks of 4096 twice: (m, s) updated
online, then out = exp(x - m) / s chunk by chunk: 16 values a thread, no spills; 12 bytes an element.

Model (the needed work, for both): FLOPs ~4 an element (the subtraction, the exponential, the sum, the
division) = 4 R V; bytes the row read once and written once: 8 R V = 2.7e8.

Expected on an H100/H200 (per design): v1 ~0.1 ms (403 MB at ~4 TB/s); v0 ~0.25-0.5 ms (the row stored to
local memory and reloaded three or four times: 256 programs of 512 threads, a 1 MB stack a program, more
than an SM's L1, spilling to L2 and DRAM): ~2.5-5x. Cause "spills"; resource None (the limiter is the spill
traffic of local memory, not a pipe).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    r, v = p["R"], p["V"]
    return {
        "x": (3.0 * torch.randn(r, v, generator=g)).to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((r, v), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    return inputs["x"].double().softmax(1).to(inputs["out"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 4.0 * p["R"] * p["V"]


def _bytes(p):
    return 8.0 * p["R"] * p["V"]


KERNEL = KernelPackage(
    name="calib_softmax_wholerow",
    description="Calibration (held back, set 41; planted: the Triton tutorial's whole-row softmax kernel "
    "applied to 131072-wide rows, the row's values spilled to local memory, where an online softmax over "
    "4096-wide chunks serves): 256 rows of 131072 fp32 logits; v0 BLOCK = 131072 with 16 warps, v1 two passes "
    "over 4096-wide chunks",
    params=(
        Param("R", 256, min=1, max=1 << 16, doc="rows"),
        Param("V", 131072, min=1, max=1 << 17, doc="row length (vocabulary)"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the whole row one block (BLOCK = next_power_of_2(V)), spilled to local memory",
            (StageModel("softmax_whole_row", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: an online softmax over 4096-wide chunks (running max and sum, then a normalising pass)",
            (StageModel("softmax_online_chunks", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
