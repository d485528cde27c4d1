"""Calibration pair — float64 arithmetic where float32 suffices (issue 36: the FP64 pipe the limiter).

The work: every element x of an fp32 vector (n = 2^24, uniform in [0, 1)) is iterated ``iters``
times through the FMA x ← a·x + c with a = 1 − 2^-8 and c = 2^-8 (both exact in fp32 and fp64;
the fixed point c / (1 − a) is exactly 1), so out = 1 − (1 − x)·a^iters, which the reference
computes in float64. 8 elements per thread (1024-element programs, 4 warps): 8 independent FMA
chains per thread hide the FMA latency. The values stay in registers: 2·iters FLOPs per 8 bytes of
DRAM traffic (64 FLOP/byte at iters = 256), right of the H100's FP32 ridge (~20 FLOP/byte).

Planted problem (v0): the chain runs in float64 (``x.to(tl.float64)``, a and c cast too, the
result cast back to fp32): one DFMA per step on the FP64 pipe, which issues 64 results per SM per
clock on an H100 (the CUDA C++ Programming Guide's throughput table, compute capability 9.0),
half the FP32 FMA rate (128). Nothing in the output needs float64: the chain is contractive
(|a| < 1), and fp32 keeps it within 1e-6 of the exact result.

Fix (v1): the same kernel and grid with the chain in float32: one FFMA per step on the FMA pipes.

Model: 2·iters FLOPs and 8 bytes per element (x read, out written); the FLOPs are the same work in
either precision.

What the machine model should see (H100 SXM, per design): v0's DFMA count = n·iters = 4.3e9
(``smsp__sass_thread_inst_executed_op_dfma_pred_on``), the FP64 pipe near its peak, FFMA ≈ 0;
v1: FFMA = n·iters, FP64 pipe idle. Expected: v0 ≈ n·iters / (64 × 132 SMs × 1.98 GHz) ≈ 257 µs,
v1 ≈ 129 µs on the FMA pipe (DRAM: 134 MB ≈ 45 µs): ≈ 2× (+100 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

A = 1.0 - 2.0**-8  # exact in fp32
C = 2.0**-8  # exact in fp32; the fixed point c / (1 - a) is exactly 1


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.rand(p["n"], generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "out": torch.full((p["n"],), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    x = inputs["x"].double()
    return (1.0 - (1.0 - x) * (A ** p["iters"])).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


_STAGE = StageModel("iterate", flops=lambda p: 2.0 * p["n"] * p["iters"], bytes=lambda p: 8.0 * p["n"])

KERNEL = KernelPackage(
    name="calib_fp64",
    description="Calibration (planted: float64 where float32 suffices): an FMA chain per element computed in "
                "float64 on the FP64 pipe (v0) vs the same chain in float32 on the FMA pipes (v1)",
    params=(Param("n", 1 << 24, min=1, max=1 << 30, doc="elements"),
            Param("iters", 256, min=1, max=1 << 16, doc="FMA steps per element"),
            DTYPE_PARAM("float32", choices=("float32",))),
    make_inputs=_inputs,
    reference=_reference,
    versions=(Version("v0", "planted: the FMA chain in float64 (x cast to fp64 in the kernel, one DFMA per step "
                            "on the FP64 pipe), 1024-element programs, 4 warps", (_STAGE,), _build("v0")),
              Version("v1", "fix: the same chain in float32 (one FFMA per step on the FMA pipes), same programs",
                      (_STAGE,), _build("v1"))),
    memory_bytes=lambda p: 8.0 * p["n"],
    tolerance=lambda dtype: 1e-5,
)
