"""Calibration pair — too few blocks: y = a·x + b (a = 2, b = 1) over n fp32 elements.

Planted problem (v0): only ``programs`` programs (default 16; an H100 has 132 SMs), each a
4-warp program looping over a contiguous n/programs chunk in 2048-element steps (16 floats, four
16-byte loads per thread, 8 KB in flight per step). 116 SMs get no work, and each busy SM has one
program: by Little's law it pulls ~28 GB/s, close to its 1/132 share of the H100's ~2.9 TB/s
(22 GB/s), which is what the diagnosis' idle-SM model (share 1 − grid/SMs) assumes.

Fix (v1): the same 2048-element, 4-warp step as a grid of n/2048 programs (32 K at the
defaults): every SM holds many programs, DRAM near its roof.

Model: 8·n bytes (x read, y written), 2·n FLOPs (one FMA per element).

What Nsight Compute should show for v0: ``launch__grid_size`` 16 < 132 SMs,
``launch__waves_per_multiprocessor`` ≈ 0.01 (16 blocks, 16 fit per SM), DRAM throughput
≈ 12 %, ``sm__throughput`` ≈ 1 %, DRAM bytes = the model (no over-fetch). v1: waves ≈ 15.5,
DRAM ≈ 87 %. (Measured on an H100 SXM, Triton 3.6.)

Expected speed-up on an H100 SXM (n = 2^26, 512 MB model): v1 ≈ 184 µs (the bandwidth of
``copy_``); v0 ≈ 16 × 28 GB/s → ≈ 1.2 ms: ≈ 6.4× (the idle-SM model: 132/16 = 8.25×).
Measured (event timing, L2 flushed, median of 15): v0 1182 µs, v1 184 µs → 6.4×. The step
size matters because a lone program's bandwidth is set by its loads in flight: with
4096-element steps v0 took 747 µs (4.0×: a busy SM pulls twice its share and the idle-SM
model overshoots), with 1024-element steps 1947 µs (10.6×).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

A = 2.0
B = 1.0


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(p["n"], generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "y": torch.full((p["n"],), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    return (inputs["x"].double() * A + B).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


_STAGE = StageModel("axpb", flops=lambda p: 2.0 * p["n"], bytes=lambda p: 8.0 * p["n"])

KERNEL = KernelPackage(
    name="calib_few_blocks",
    description="Calibration (planted: too few blocks): y = 2x + 1 with 16 programs looping over big chunks (v0) vs "
                "a full grid of 2048-element programs (v1)",
    params=(Param("n", 1 << 26, min=1, max=1 << 30, doc="elements"),
            Param("programs", 16, min=1, max=1 << 20, doc="v0's number of programs (each loops over n/programs)"),
            DTYPE_PARAM("float32", choices=("float32",))),
    make_inputs=_inputs,
    reference=_reference,
    versions=(Version("v0", "planted: `programs` (16) programs, each looping over a contiguous chunk in 2048-element "
                            "steps, 4 warps", (_STAGE,), _build("v0")),
              Version("v1", "fix: one program per 2048 elements (n/2048 programs), 4 warps", (_STAGE,), _build("v1"))),
    memory_bytes=lambda p: 8.0 * p["n"],
)
