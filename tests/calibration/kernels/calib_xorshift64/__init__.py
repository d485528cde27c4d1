"""Calibration pair (twenty-third held-back set) — a 32-bit xorshift generator (Marsaglia 2003: x ^= x << 13;
x ^= x >> 17; x ^= x << 5) stepped in 64-bit integers, as code ported from Python/NumPy (whose integers are 64
bits) keeps it: the state widened to int64 and masked back to 32 bits after every left shift. Every shift, xor and
mask is then a pair of 32-bit instructions (or a funnel shift and a move) on the integer ALU; the values are the
same as with uint32 arithmetic, whose wrap-around is the mask. The fix: the state as tl.uint32. Sources:
G. Marsaglia, "Xorshift RNGs" (J. Stat. Softw. 8(14), 2003), the CUDA C++ Programming Guide ("Arithmetic
Instructions": 64-bit integer operations are emulated by several 32-bit ones) and the CUDA C++ Best Practices
Guide ("Instruction Optimization").

The work: for 16 M seeds (int32, read as uint32), the state after 64 xorshift steps, stored as int32.

Planted problem (v0): stage "xorshift_i64": the state int64, `& 0xFFFFFFFF` after each left shift.
Fix (v1): stage "xorshift_u32": the state uint32 (wrap-around).

Model (both): ops 64 steps x 6 integer operations an element (no FLOPs; bytes the seeds read and the states written
once).

Expected on an H100 SXM (per design): v1 ~6.4 G integer operations on the ALU pipe (~64 a clock an SM): ~0.4-0.5
ms, compute-bound; v0 ~2-3x the instructions: ~1.0-1.4 ms: ~2-3x. Cause "move_work" (the needed integer work done
by a costlier method: emulated 64-bit where 32-bit gives the same values), resource "alu".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

STEPS = 64


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    seeds = torch.randint(-(2**31), 2**31 - 1, (p["N"],), generator=g, dtype=torch.int64)
    seeds[seeds == 0] = 1  # xorshift's state must not be 0
    return {
        "seeds": seeds.to(torch.int32).to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((p["N"],), 7, device=device, dtype=torch.int32),
    }


def _reference(inputs, p):
    import torch

    x = inputs["seeds"].cpu().to(torch.int64) & 0xFFFFFFFF
    m = 0xFFFFFFFF
    for _ in range(STEPS):
        x = x ^ ((x << 13) & m)
        x = x ^ (x >> 17)
        x = x ^ ((x << 5) & m)
    x = torch.where(x >= 2**31, x - 2**32, x)
    return x.to(torch.int32).to(inputs["seeds"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 0.0


def _bytes(p):
    return 8.0 * p["N"]


KERNEL = KernelPackage(
    name="calib_xorshift64",
    description="Calibration (held back, set 23; planted: a 32-bit xorshift generator stepped in 64-bit "
    "integers): 16 M states after 64 xorshift32 steps; v0 int64 with masks, v1 uint32",
    params=(
        Param("N", 1 << 24, min=1, max=1 << 28, doc="number of seeds (states)"),
        DTYPE_PARAM("int32", choices=("int32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the state in int64, masked to 32 bits after each left shift",
            (StageModel("xorshift_i64", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the state in uint32",
            (StageModel("xorshift_u32", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
