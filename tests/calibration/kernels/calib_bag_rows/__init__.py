"""Calibration pair (eighth held-back set) — an embedding bag summed one row at a time: a runtime loop whose
iterations each load one index, then one row, then add it, so a program has one row in flight at a time and
the DRAM sits mostly idle waiting (CUDA C++ Best Practices Guide, "Memory optimizations" / latency hiding:
enough independent memory requests in flight per SM, by occupancy or by instruction-level parallelism;
Nsight Compute's warp state statistics: warps stalled on long scoreboard, DRAM throughput far below its peak).

The work: EmbeddingBag(mode="sum"), out[b, :] = Σ_{j<L} table[ids[b, j], :], for B = 65536 bags of L = 32
random ids into a V = 1048576 x D = 128 bf16 table (256 MB; fp16/fp32 allowed for the CPU interpreter), out
fp32. One program of 4 warps per bag (one element of the row a thread, D = 128).

Planted problem (v0): ``for j in range(L): acc += table[ids[b, j], :]`` with L a runtime argument: each
iteration's row load waits on its index load and the add waits on the row, so each program (4 warps) keeps
one 256-byte row in flight; at ~16 resident programs an SM, ~4 KB in flight an SM where the DRAM's latency
needs ~16-20 KB.
Fix (v1): the same program loads its L ids as one vector and the [L, D] rows as one gather, then sums over L:
32 rows in flight a program.

Model: the rows read once, the ids once, the sums written once (bytes 2·B·L·D + 4·B·L + 4·B·D = 579 MB at the
defaults); B·L·D FLOPs (the adds; 2.7e8).

Expected on an H100 SXM (per design): v1 ~579 MB of 256-byte random rows → ~0.2-0.25 ms; v0 ~32 dependent
steps of ~1 µs per bag, 31 waves of 2112 programs → ~1 ms: ~4x. v0's limiter is latency (cause "latency"):
no pipe and no memory level near its peak (resource None); the fix puts 32x the bytes in flight.
Tolerance: fp32 sums of 32 rows in another order: 1e-5 relative (1e-3 for half inputs in the interpreter).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    table = torch.randn(p["V"], p["D"], generator=g, device=device, dtype=torch.float32).to(dt)
    ids = torch.randint(0, p["V"], (p["B"], p["L"]), generator=g, device=device, dtype=torch.int32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    out = torch.full((p["B"], p["D"]), float("nan"), device=device, dtype=torch.float32)
    return {"table": table, "ids": ids, "out": out}


def _reference(inputs, p):
    return inputs["table"].float()[inputs["ids"].long()].sum(dim=1)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(p.itemsize * p["B"] * p["L"] * p["D"] + 4 * p["B"] * p["L"] + 4 * p["B"] * p["D"])


_STAGE = StageModel("embedding_bag", flops=lambda p: float(p["B"] * p["L"] * p["D"]), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_bag_rows",
    description="Calibration (held back, set 8; planted: an embedding bag summed one row at a time): "
    "EmbeddingBag(sum) of 32 random rows per bag from a 1M x 128 bf16 table; v0 a loop loading one index and "
    "one row per step, v1 the bag's rows gathered as one [L, D] tile",
    params=(
        Param("B", 65536, min=1, max=1 << 22, doc="bags"),
        Param("L", 32, min=1, max=1024, doc="ids per bag"),
        Param("V", 1 << 20, min=1, max=1 << 26, doc="table rows"),
        Param("D", 128, min=16, max=1024, doc="row width (a power of two)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: a runtime loop loading one index and one row per step (one row in flight a program)",
            (_STAGE,),
            _build("v0"),
        ),
        Version("v1", "fix: the bag's ids and rows loaded as one [L, D] gather", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: float(p.itemsize * p["V"] * p["D"] + 4 * p["B"] * p["L"] + 4 * p["B"] * p["D"]),
    tolerance=lambda dtype: 1e-5 if dtype == "float32" else 1e-3,
)
