"""Calibration pair — random gather: an embedding lookup out[i, :] = table[idx[i], :] with a
random index (fp32 table [V, D], int32 indices drawn with a seeded generator).

Planted problem (v0): programs walk the output column by column. A program takes BLOCK lookups
and ONE column d, and loads table[idx[i], d] for its BLOCK random rows: every 4-byte element
comes from its own 32-byte sector (a random row), so each load uses 4 of the 32 bytes fetched.
Columns are handed out 8 apart (d = 0, 8, 16, …, then 1, 9, …), so a sector is needed again (for
the neighbouring column) only after D/8 sweeps over the batch — 16 × ~10 MB = 160 MB of traffic
at the defaults, three times the H100's 50 MB L2 — and is fetched from DRAM again. v0 writes
column d of the output as one contiguous run (the output buffer seen as [D, B], returned
as its transpose: the same values, in column-major layout), so its stores are coalesced and the
only planted problem is the reads.

Fix (v1): each program gathers whole rows (ROWS lookups × the D contiguous floats of each row,
coalesced 512-byte rows at D = 128) and writes them as rows of out[B, D].

Model: the B gathered rows read once, the indices read once, the output written once:
2·B·D·4 + 4·B bytes; 0 FLOPs.

What Nsight Compute should show for v0: ``dram__bytes_read.sum`` far above the gathered bytes
(a 32-byte sector or 64-byte DRAM atom per 4-byte element): DRAM bytes ÷ model ≫ 1, ~29 L1
sectors per load request; v1: ≈ 1.0 (slightly below: repeated indices hit in L2).
Measured on an H100 SXM (Triton 3.6, defaults): v0 read 1.52 GB (11.3× the 135 MB of rows
and indices it needs) and wrote 133 MB: DRAM bytes ÷ model = 6.15, DRAM throughput 58 %, L2 hit
35 %; v1 moved 245 MB (0.91× the model) at DRAM 81 %. (DRAM 58 % is below the diagnosis' 70 %
"memory-bound" line, so the over-fetch estimate is scaled by DRAM %.)

Expected speed-up on an H100 SXM (B = 2^18, V = 2^20, D = 128: 269 MB model, 512 MB table):
v1 ≈ 0.1 ms (near the copy bandwidth); v0 moves ~6× the bytes as scattered sectors → ~0.85 ms.
Measured (event timing, L2 flushed, median of 15): v0 852 µs, v1 97 µs → 8.8×.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    table = torch.randn(p["V"], p["D"], generator=g, device=device, dtype=torch.float32)
    idx = torch.randint(0, p["V"], (p["B"],), generator=g, device=device, dtype=torch.int32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    out = torch.full((p["B"], p["D"]), float("nan"), device=device, dtype=torch.float32)
    return {"table": table, "idx": idx, "out": out}


def _reference(inputs, p):
    return inputs["table"][inputs["idx"].long()]


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


# Minimum traffic: B gathered rows read once (a random batch of a larger table), the indices
# read once, the output written once.
_STAGE = StageModel("gather", flops=lambda p: 0.0, bytes=lambda p: 2.0 * p["B"] * p["D"] * 4 + 4.0 * p["B"])

KERNEL = KernelPackage(
    name="calib_gather",
    description="Calibration (planted: sector over-fetch): embedding gather column by column, one 4-byte element per "
                "random row (v0) vs whole contiguous rows (v1)",
    params=(Param("B", 1 << 18, min=1, max=1 << 24, doc="lookups (rows of the output)"),
            Param("V", 1 << 20, min=1, max=1 << 24, doc="rows of the table"),
            Param("D", 128, min=1, max=1024, doc="row length (floats)"),
            DTYPE_PARAM("float32", choices=("float32",))),
    make_inputs=_inputs,
    reference=_reference,
    versions=(Version("v0", "planted: one column of BLOCK=1024 random rows per program (one 4-byte element per "
                            "32-byte sector), columns handed out 8 apart so sectors are not reused from L2; "
                            "coalesced column-major stores; 4 warps", (_STAGE,), _build("v0")),
              Version("v1", "fix: whole rows per program (ROWS x D contiguous floats, 4096 per program), coalesced "
                            "loads and stores; 4 warps", (_STAGE,), _build("v1"))),
    memory_bytes=lambda p: 4.0 * (p["V"] * p["D"] + p["B"] * p["D"] + p["B"]),
)
