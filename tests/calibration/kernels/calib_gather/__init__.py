"""Calibration pair — random gather: an embedding lookup out[i, :] = table[idx[i], :] with a
random index (fp32 table [V, D]).

v0 (planted problem): programs walk the output column by column: each load takes one 4-byte
element from each of BLOCK random rows, so every element costs its own 32-byte sector, and the
same rows are revisited for the next column only after the whole batch (long evicted from L2):
DRAM bytes ≈ 8× the model's reads. Nsight Compute: DRAM bytes ÷ model ≫ 1.

v1 (the fix): each program gathers whole rows (D contiguous floats, coalesced): DRAM bytes ≈
the model (each gathered row read once, the output written once).

Expected on an H100 (B = 2^20 lookups, D = 64, V = 2^20): v1 ≈ 512 MB / ~2.8 TB/s ≈ 190 µs;
v0 moves ≈ 8× the reads → several times slower.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    table = torch.randn(p["V"], p["D"], generator=g, device=device, dtype=torch.float32)
    idx = torch.randint(0, p["V"], (p["B"],), generator=g, device=device, dtype=torch.int64)
    return {"table": table, "idx": idx, "out": torch.full((p["B"], p["D"]), float("nan"), device=device)}


def _reference(inputs, p):
    return inputs["table"][inputs["idx"]]


def _v0(inputs, p):
    from .impl import build_v0

    return build_v0(inputs, p)


def _v1(inputs, p):
    from .impl import build_v1

    return build_v1(inputs, p)


# Minimum traffic: B gathered rows read once (the table is larger than the batch touches),
# the indices read once, the output written once.
_STAGE = StageModel("gather", flops=lambda p: 0.0,
                    bytes=lambda p: 2.0 * p["B"] * p["D"] * 4 + p["B"] * 8)

KERNEL = KernelPackage(
    name="calib_gather",
    description="Calibration: embedding gather by columns (v0, one element per random row) vs whole rows (v1)",
    params=(Param("B", 1 << 20, min=16, max=1 << 24, doc="lookups"),
            Param("V", 1 << 20, min=16, max=1 << 24, doc="table rows"),
            Param("D", 64, min=16, max=1024, doc="row length"),
            DTYPE_PARAM("float32", choices=("float32",))),
    make_inputs=_inputs, reference=_reference,
    versions=(Version("v0", "column by column: one 4-byte element per random row per load", (_STAGE,), _v0),
              Version("v1", "whole rows per program: coalesced D-float vectors", (_STAGE,), _v1)),
    memory_bytes=lambda p: (p["V"] * p["D"] + p["B"] * p["D"]) * 4.0 + p["B"] * 8,
)
