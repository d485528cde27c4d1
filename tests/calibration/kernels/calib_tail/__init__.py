"""Calibration pair — tail effect (wave quantization): a compute-bound kernel whose grid is
about 1.1 waves, so the last wave runs on one SM in ten.

The work: every element x of an fp32 vector is iterated ``iters`` times through the FMA
x ← a·x + c (a = 1 − 2^-10, c = 2^-10, both exact in fp32; the result is 1 − (1 − x)·a^iters,
which the reference computes in float64: rel. error ≈ 8e-7 at the defaults). The values stay in
registers: 2·iters FLOPs per 8 bytes of DRAM traffic (1024 FLOP/byte at the default
iters = 4096), far right of the H100's ridge: the roof is FP32 FMA throughput.

Problem size: (SMs + SMs // 10) "big tiles" of 32768 elements, SMs being the device's SM count
(132 on an H100 SXM; 132 under the Triton interpreter), each tile divided by ``shrink`` (CPU
tests only). The models use the same count (they run in the profiling worker).

One program per SM, and a program that fills its SM: both versions run the same kernel with
32 warps (1024 threads, the most a block may have). A big tile holds 32 loop-carried fp32 values
per thread, so the kernel needs more than 32 registers per thread, and 1024 threads × more than
32 registers is more than half of the SM's 64 K registers: a second program cannot be resident
(``launch__occupancy_limit_registers`` = 1; the thread limit, 2048, would allow two). 1024
threads cap a thread at 64 registers; ptxas used 64 with no spills (H100, Triton 3.6). 32
independent FMA chains per thread on 8 warps per scheduler keep the FMA pipes full (ncu: FMA
pipe ≈ 99 % of active cycles), so a program takes the same time T whatever the other SMs do.

Planted problem (v0): SMs + SMs//10 programs (145 on an H100), one big tile each: the first
wave runs 132 programs, the second 13 on 13 SMs while 119 idle: 2 T for 1.1 T of work.

Fix (v1): a persistent grid of exactly SMs programs (one wave, one program per SM): each does
one big tile, then the elements of the remaining SMs//10 big tiles are split into 8× smaller
tiles (4096 elements, 4 values per thread), 104 of them, at most one per program: every SM
finishes after 1 + 1/8 T. The per-element FMA sequence is the same, so v0 and v1 outputs are
bitwise identical. The inner loop is unrolled 32× in both versions (loop overhead < 3 %).

Model: 2·iters FLOPs and 8 bytes per element (x read, out written).

What Nsight Compute should show for v0: ``launch__waves_per_multiprocessor`` = 1.10,
``launch__grid_size`` 145, ``launch__occupancy_limit_registers`` 1, no local-memory traffic,
``sm__throughput`` ≈ 54 % of peak over the kernel (the second wave leaves 119 SMs idle) while
the FMA pipe is ≈ 99 % busy on the active SMs; v1: waves 1.00, grid 132, ``sm__throughput`` ≈ 96 %.

Expected speed-up on an H100 SXM: v0 = 2 T, v1 = 1.125 T → 1.78× (gain ≈ 75-78 %); the
profiler's tail model gives 1 − 1.10/2 = 45 % of v0's time (gain ≈ 82 %), and the FP32 roof
(T_sol ≈ 1.1 T) leaves v0 a headroom of ≈ 45 %. Measured on an H100 SXM (event timing, L2
flushed, median of 15): v0 1075 µs, v1 611 µs → 1.76×.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, ParamError, StageModel, Version

BIG = 32768          # elements per big tile (32 warps x 32 values)
SMALL = 4096         # elements per small tile (32 warps x 4 values)
A = 1.0 - 2.0 ** -10  # exact in fp32
C = 2.0 ** -10        # exact in fp32; the fixed point c / (1 - a) is exactly 1
CPU_SMS = 132


def device_sms(device=None) -> int:
    """The device's SM count: the CUDA device's, or 132 (an H100 SXM) under the interpreter / on the CPU.

    The problem size follows it (the grid must be SMs + SMs//10 programs of fixed work), so the
    models call it too; they run in the profiling worker, which has imported torch.
    """
    import os

    if device is not None and not str(device).startswith("cuda"):
        return CPU_SMS
    if os.environ.get("TRITON_INTERPRET") == "1":
        return CPU_SMS
    import torch

    if not torch.cuda.is_available():
        return CPU_SMS
    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


def v0_programs(sms: int) -> int:
    return sms + sms // 10


def elements(p, device=None) -> int:
    return v0_programs(device_sms(device)) * (BIG // p["shrink"])


def _inputs(p, device):
    import torch

    shrink = p["shrink"]
    if shrink & (shrink - 1):
        raise ParamError(f"shrink={shrink} must be a power of two (it divides the tiles of {BIG} and {SMALL})")
    n = elements(p, device)
    g = torch.Generator(device=device).manual_seed(0)
    x = torch.rand(n, generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "out": torch.full((n,), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    x = inputs["x"].double()
    return (1.0 - (1.0 - x) * (A ** p["iters"])).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


_STAGE = StageModel("iterate", flops=lambda p: 2.0 * elements(p) * p["iters"], bytes=lambda p: 8.0 * elements(p))

KERNEL = KernelPackage(
    name="calib_tail",
    description="Calibration (planted: tail effect): a compute-bound grid of SMs + SMs/10 one-per-SM programs, about "
                "1.1 waves (v0) vs one program per SM, the leftover split into 8x smaller tiles (v1)",
    params=(Param("iters", 4096, min=1, max=1 << 20, doc="FMA iterations per element"),
            Param("shrink", 1, min=1, max=1024, doc="divide the tiles (a power of two; CPU tests only, 1 on a GPU)"),
            DTYPE_PARAM("float32", choices=("float32",))),
    make_inputs=_inputs,
    reference=_reference,
    versions=(Version("v0", "planted: SMs + SMs/10 programs (32 warps, one 32768-element tile of 32 values per "
                            "thread each; >32 registers/thread: one program per SM): about 1.1 waves, the last on "
                            "one SM in ten", (_STAGE,), _build("v0")),
              Version("v1", "fix: persistent grid of exactly SMs programs, one big tile each, then the leftover in "
                            "8x smaller tiles (at most one per program): one wave, every SM busy to the end",
                      (_STAGE,), _build("v1"))),
    memory_bytes=lambda p: 8.0 * elements(p),
)
