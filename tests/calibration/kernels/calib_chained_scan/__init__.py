"""Calibration pair (twelfth held-back set; replaces calib_csr_scalar, which measured 1.20x in the first
call's quick check) — a single-pass prefix sum whose programs wait in a chain for their predecessor's
prefix: the "chained scan" (each tile's inclusive prefix published only once its predecessor's is known, so
the tiles' prefixes are found one after another across the whole grid, one inter-program round trip each)
where the "decoupled look-back" lets every tile publish its own aggregate at once and sum its predecessors'
published aggregates until it meets an inclusive prefix (Merrill and Garland, "Single-pass Parallel Prefix
Scan with Decoupled Look-back", NVIDIA Technical Report NVR-2016-002, 2016: the chained scan's serial
dependency costs the latency of one inter-block prefix propagation per tile; CUB's DeviceScan).

The work: the exclusive prefix sum of N = 2^24 int32 counts (0-15, e.g. the tokens each expert or segment
receives: offsets for a compaction or a dispatch). One program of 8 warps per tile of BLOCK = 4096 values
(4096 tiles); tile ids taken from an atomic counter (the order in which programs start, so every tile's
predecessors are running or done); each tile's status one int64 word (flag << 32 | value: 0 not ready, 1 the
tile's aggregate, 2 its inclusive prefix) published with one atomic exchange. Both versions reset the status
words and the counter first (a memset, part of each run).

Planted problem (v0): the chained scan: tile t spins on tile t-1's word until it holds an inclusive prefix,
then publishes its own; the 4096 tiles' prefixes are found in sequence, each one L2 round trip (the
predecessor's exchange, then this tile's read) after the last: the other programs spin meanwhile.
Fix (v1): decoupled look-back: tile t publishes its aggregate first, then walks back over t-1, t-2, ...
adding aggregates until it reads an inclusive prefix, and publishes its own: no chain across the grid.

Model: x read once, out written once (bytes 8·N = 134 MB); FLOPs N (the additions).

Expected on an H100 SXM (per design): v1 ~134 MB at ~2.5-3 TB/s plus short look-backs ≈ 0.06-0.1 ms; v0 4096
sequential links of ~0.5-1.5 µs ≈ 2-6 ms: far more than 1.5x. The programs wait on a chain of dependent
round trips with no pipe or memory level busy: cause "latency", resource None.
Tolerance: integer sums: exact (0).
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    n, block = p["N"], 4096
    tiles = (n + block - 1) // block
    return {
        "x": torch.randint(0, 16, (n,), generator=g, dtype=torch.int32).to(device),
        "status": torch.zeros(tiles, dtype=torch.int64, device=device),
        "counter": torch.zeros(1, dtype=torch.int32, device=device),
        # Poisoned output: -1 is no exclusive prefix of non-negative counts.
        "out": torch.full((n,), -1, dtype=torch.int32, device=device),
    }


def _reference(inputs, p):
    import torch

    x = inputs["x"].long()
    return (torch.cumsum(x, 0) - x).to(torch.int32)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


_STAGE = StageModel("scan", flops=lambda p: float(p["N"]), bytes=lambda p: float(8 * p["N"]))

KERNEL = KernelPackage(
    name="calib_chained_scan",
    description="Calibration (held back, set 12; planted: a scan whose programs wait in a chain for their "
    "predecessor's prefix): exclusive prefix sum of 2^24 int32 counts, one pass, 4096 tiles; v0 the chained "
    "scan (each tile waits for the previous tile's inclusive prefix), v1 decoupled look-back",
    params=(
        Param("N", 1 << 24, min=1, max=1 << 28, doc="values"),
        Param("dtype", "int32", choices=("int32",), doc="counts and prefixes dtype"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: chained scan (each tile waits for its predecessor's prefix)",
            (_STAGE,),
            _build("v0"),
        ),
        Version("v1", "fix: decoupled look-back", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: float(8 * p["N"] + 8 * (p["N"] // 4096 + 1)),
    tolerance=lambda dtype: 0.0,
)
