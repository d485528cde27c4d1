"""Calibration pair (thirtieth held-back set) — 2-D Morton (Z-order) codes of points, the two 16-bit quantised
coordinates interleaved one bit at a time ("interleave bits the obvious way": a loop over the 16 bit positions,
each bit of x and of y masked, shifted to its place and or-ed in), where spreading each coordinate's bits with the
binary magic numbers (four shift-or-mask steps, "Part1By1") gives the same codes. Sources: S. E. Anderson, "Bit
Twiddling Hacks" (Stanford; "Interleave bits the obvious way" against "Interleave bits by Binary Magic Numbers"),
F. Giesen, "Decoding Morton Codes" (2009, Part1By1), T. Karras, "Maximizing Parallelism in the Construction of
BVHs, Octrees, and k-d Trees" (HPG 2012: Morton codes of points in the unit cube, computed by bit spreading, to
sort primitives for a BVH); the CUDA C++ Programming Guide's arithmetic-instruction throughput table (32-bit
integer shift and logical operations) and the CUDA C++ Best Practices Guide ("Instruction Optimization").

The work: codes [N] int32 (the 32-bit code's bit pattern) of N points P [2, N] fp16 in [0, 1) stored
element-major (x row, y row: coalesced loads); q = min(floor(p * 65536), 65535) per coordinate, code bit 2b =
bit b of qx, bit 2b + 1 = bit b of qy.

Planted problem (v0): stage "morton_bitloop": for b in 0..15: code |= (qx & (1 << b)) << b | (qy & (1 << b)) <<
(b + 1) (unrolled: ~3 integer operations a bit a coordinate, ~100 shift/logic instructions a point).
Fix (v1): stage "morton_magic": qx, qy spread by x = (x | x << 8) & 0x00FF00FF, (x | x << 4) & 0x0F0F0F0F,
(x | x << 2) & 0x33333333, (x | x << 1) & 0x55555555 (4 steps of 3 operations), code = sx | sy << 1 (~30
integer instructions a point): memory-bound.

Model (the needed work, for both): no FLOPs (integer work only); bytes: the coordinates read (4 B a point) and
the code written (4 B) once: 8 B a point.

Expected on an H100/H200 (per design): v1 ~70-80 us (2^25 points, 268 MB at ~3.5-4 TB/s); v0 ~100 integer
instructions a point on the ALU pipes (~64 a clock an SM): ~1.5-2 SM clocks a point, ~190-250 us: ~2-3x. Cause
"move_work" (the needed codes by a costlier method: a bit-serial loop where the magic-number spreading serves),
resource "alu" (the integer shift/logic pipe).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    pts = torch.rand((2, p["N"]), generator=g)
    pts[:, ::97] = 0.0  # the corners of the cell grid: codes 0 ...
    pts[:, 1::89] = 0.99951171875  # ... and the largest fp16 below 1 (q = 65504: high bits set)
    return {
        "P": pts.to(torch.float16).to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((p["N"],), 7, device=device, dtype=torch.int32),
    }


def _reference(inputs, p):
    import torch

    q = torch.clamp((inputs["P"].cpu().double() * 65536.0).floor(), 0, 65535).to(torch.int64)
    code = torch.zeros(p["N"], dtype=torch.int64)
    for b in range(16):
        code |= ((q[0] >> b) & 1) << (2 * b)
        code |= ((q[1] >> b) & 1) << (2 * b + 1)
    code = torch.where(code >= 2**31, code - 2**32, code)
    return code.to(torch.int32).to(inputs["P"].device)


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
    name="calib_morton_bitloop",
    description="Calibration (held back, set 30; planted: 2-D Morton codes interleaved one bit at a time where "
    "the magic-number bit spreading serves): 32-bit Z-order codes of 2^25 fp16 points; v0 a 16-step bit loop, "
    "v1 Part1By1 spreading",
    params=(
        Param("N", 1 << 25, min=1, max=1 << 28, doc="points"),
        DTYPE_PARAM("int32", choices=("int32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the coordinates' bits interleaved one at a time (a 16-step unrolled loop)",
            (StageModel("morton_bitloop", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: each coordinate's bits spread with the binary magic numbers (Part1By1)",
            (StageModel("morton_magic", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
