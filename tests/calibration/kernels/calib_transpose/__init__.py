"""Calibration pair — strided access: out = x.T for an fp32 matrix x[M, N].

v0 (planted problem): one program per output row p reads column c(p) of x: every load is
strided by N·4 bytes, so each 4-byte element comes from its own 32-byte DRAM sector. The
columns are visited 8 apart (c = 8·p mod N, then the next offset), so the programs running at
the same time share no sectors, and by the time a sector's neighbouring columns are read it has
left L2: reads fetch about 8× the bytes they use. Nsight Compute shows DRAM bytes far above the
model (about 4.5×: 8× the reads plus the writes) and a memory- or latency-bound stage.

v1 (the fix): 64×64 tiles loaded coalesced along rows, transposed in registers (tl.trans) and
stored coalesced: DRAM bytes ≈ the model (read x once, write out once).

Expected on an H100 at 8192×8192: v1 ≈ 512 MB / ~2.8 TB/s ≈ 180 µs; v0 moves ≈ 2.3 GB → ≥ 4×
slower (more if the scattered sectors keep DRAM below its peak).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(p["M"], p["N"], generator=g, device=device, dtype=torch.float32)
    return {"x": x, "out": torch.full((p["N"], p["M"]), float("nan"), device=device)}


def _reference(inputs, p):
    return inputs["x"].t().contiguous()


def _v0(inputs, p):
    from .impl import build_v0

    return build_v0(inputs, p)


def _v1(inputs, p):
    from .impl import build_v1

    return build_v1(inputs, p)


_STAGE = StageModel("transpose", flops=lambda p: 0.0, bytes=lambda p: 2.0 * p["M"] * p["N"] * 4)

KERNEL = KernelPackage(
    name="calib_transpose",
    description="Calibration: transpose with strided column reads (v0) vs coalesced 64x64 tiles (v1)",
    params=(Param("M", 8192, min=64, max=1 << 15, doc="rows of x (a multiple of 64)"),
            Param("N", 8192, min=64, max=1 << 15, doc="columns of x (a multiple of 64)"),
            DTYPE_PARAM("float32", choices=("float32",))),
    make_inputs=_inputs, reference=_reference,
    versions=(Version("v0", "one program per output row, strided column reads, columns visited 8 apart",
                      (_STAGE,), _v0),
              Version("v1", "64x64 tiles, coalesced loads and stores (tl.trans)", (_STAGE,), _v1)),
    memory_bytes=lambda p: 2.0 * p["M"] * p["N"] * 4,
)
