"""Calibration pair (third held-back set) — work imbalance across programs: one program per segment of
a power-law ragged tensor, so a few programs carry most of the work and run long after the rest
(Nsight Compute's launch statistics and occupancy: "workload imbalance" between SMs, achieved
occupancy far below the theoretical; CUDA C++ Best Practices Guide, "Execution Configuration
Optimizations": keep every multiprocessor busy; the merge-path / row-splitting answer of sparse
kernels).

The work: neighbour aggregation of a graph with power-law degrees (a GNN layer's sum, CSR
segment_reduce, EmbeddingBag(mode="sum")): out[s] = Σ x[offsets[s] .. offsets[s+1]-1] for S = 65536
segments of x [rows, D] (D = 128, bf16; fp16 allowed for the CPU interpreter), fp32 sums. Segment
lengths follow Zipf's law, the r-th largest max(1, Lmax // r) rows (Lmax = 65536: one hub of 65536
rows, 32768, 21845, ...; 736,974 rows, 189 MB at the defaults), in a fixed random order (the graph's
node ids). The lengths are fixed by the graph, the values change with the seed.

Planted problem (v0): one program per segment (4 warps, a [32, 128] tile per step, fp32 accumulator,
one store): 65536 programs, most of them a few rows long, but the hub's program streams 16.8 MB alone
on one SM, one 8 KB tile per dependent step, long after every other program has finished. The grid
is large (no few-blocks, no partial last wave: ~30 waves); the time is the few longest programs'.
Fix (v1): work items of at most CHUNK = 1024 rows (a segment cut into chunks; a work list made once
with the graph, not timed; 65,809 items): every item's partial sum added into out with relaxed
atomics (out zeroed first in the stage; one 128-wide atomic row-add per item). The longest program
now reads 256 KB.

Model: x read once, out written once: bytes rows·D·itemsize + 4·S·D (222 MB at the defaults), one
add per element (rows·D FLOPs).

Expected on an H100 SXM (per design): v1 streams at ~3 TB/s: ~75-100 µs; v0's hub program reads 16.8 MB
at the rate of one program (~8 KB per ~1 µs dependent step: ~10-15 GB/s) → ~1-1.5 ms, during which
the other 131 SMs idle: ≥ 5x. No pipe or memory level is busy in v0 (resource: none); the nearest
cause key is "tail" (the kernel's time is a long tail in which few SMs work; not a partial wave).
Tolerance: fp32 sums in any order: 1e-5 relative.
Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 2162 µs,
v1 377 µs (5.7x; v1 slower than the design's 75-100 µs: its ~65.8k mostly few-row programs are short and
latency-bound); recorded event medians v0 2650 µs, v1 549 µs (+383 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

CHUNK = 1024  # the fix's largest work item, in rows


def _lengths(p):
    """Segment lengths by rank (Zipf: the r-th largest is max(1, Lmax // r)), in pure Python."""
    return [max(1, p["Lmax"] // r) for r in range(1, p["S"] + 1)]


def _rows(p):
    return sum(_lengths(p))


def _structure(p, device):
    """The graph: the segments' lengths in a fixed random order, their offsets, and both work lists
    (independent of the values' seed)."""
    import torch

    g = torch.Generator(device="cpu").manual_seed(1234)
    lengths = torch.tensor(_lengths(p), dtype=torch.int64)[torch.randperm(p["S"], generator=g)]
    offsets = torch.zeros(p["S"] + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(lengths, 0)
    segs = torch.arange(p["S"], dtype=torch.int64)
    # v1: the k-th chunk of segment s covers offsets[s] + k·CHUNK .. min(offsets[s+1], ... + CHUNK)
    n_chunks = (lengths + CHUNK - 1) // CHUNK
    c_seg = torch.repeat_interleave(segs, n_chunks)
    first = torch.cumsum(n_chunks, 0) - n_chunks
    k = torch.arange(int(n_chunks.sum())) - torch.repeat_interleave(first, n_chunks)
    c_start = offsets[c_seg] + k * CHUNK
    c_end = torch.minimum(c_start + CHUNK, offsets[c_seg + 1])
    i32 = {"dtype": torch.int32, "device": device}
    return {
        "offsets": offsets.to(device),
        "item_seg": segs.to(**i32),
        "item_start": offsets[:-1].to(**i32),
        "item_end": offsets[1:].to(**i32),
        "item_seg_chunks": c_seg.to(**i32),
        "item_start_chunks": c_start.to(**i32),
        "item_end_chunks": c_end.to(**i32),
    }


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(_rows(p), p["D"], generator=g, device=device, dtype=torch.float32).to(dt)
    out = torch.full((p["S"], p["D"]), float("nan"), device=device, dtype=torch.float32)
    return dict(_structure(p, device), x=x, out=out)


def _reference(inputs, p):
    import torch

    offsets = inputs["offsets"]
    seg_of_row = torch.repeat_interleave(
        torch.arange(p["S"], device=offsets.device), offsets[1:] - offsets[:-1]
    )
    out = torch.zeros(p["S"], p["D"], dtype=torch.float64, device=offsets.device)
    return out.index_add_(0, seg_of_row, inputs["x"].double()).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(_rows(p) * p["D"] * p.itemsize + 4 * p["S"] * p["D"])


_STAGE = StageModel("segment_sum", flops=lambda p: float(_rows(p) * p["D"]), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_segment_imbalance",
    description="Calibration (held back, set 3; planted: one program per power-law segment, a few programs carry "
    "most of the work): segment sums of a ragged [rows, 128] bf16 tensor with Zipf lengths; v0 one program per "
    "segment, v1 work items of at most 1024 rows with atomic partial sums",
    params=(
        Param("S", 65536, min=1, max=1 << 20, doc="segments (graph nodes)"),
        Param(
            "Lmax",
            65536,
            min=1,
            max=1 << 22,
            doc="rows of the longest segment (Zipf: the r-th has Lmax // r)",
        ),
        Param("D", 128, min=1, max=1024, doc="row length (feature width)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: one program per segment (the hub's 65536 rows in one program), the sum stored",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: work items of at most 1024 rows, partial sums added with relaxed atomics into the zeroed output",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-5,
)
