"""Calibration pair (tenth held-back set) — a sequence's pages found by following a linked list (each page's
successor read from a ``next`` array) where a page table (the sequence's page ids in one array) lets every page
be fetched at once (CUDA C++ Best Practices Guide, "Memory optimizations" / "Hiding latency": a warp stalls
on each dependent global load, throughput needs independent loads in flight; a pointer chase puts one
dependent DRAM round trip on every step).

The work: gather R = 256 sequences' pages out of a paged pool into a contiguous buffer (a paged cache or a
block allocator compacted for a dense kernel): each sequence owns NP = 1024 pages of PAGE = 256 values
(fp16; fp32 allowed), scattered at random over a pool of R·NP pages; out[r, j·PAGE:(j + 1)·PAGE] =
pool[page j of sequence r]. Both layouts describe the same pages: ``head[r]`` and ``next[page]`` (the linked
list, -1 at the end) and ``table[r, j]`` (the page table). One program of 4 warps per sequence (R programs).

Planted problem (v0): the allocator's linked list walked page by page: p = head[r]; for j < NP: copy page p,
p = next[p]. The address of page j + 1 is known only when the load of next[p] returns, and the page's copy
waits for its data before the loop goes on: one dependent memory round trip (~0.7-1 µs) per 512-byte page
per program, 256 programs: ~256 · 512 B / ~0.8 µs ≈ 0.16 TB/s, whatever the DRAM could give.
Fix (v1): the page table: for each CHUNK = 32 pages, their 32 ids loaded at once, then the 32 pages (a
[32, 256] tile, 16 KB) loaded and stored together: no load waits for another page's data.

Model: the pages read once and written once, the page ids read once (bytes 2·R·NP·PAGE·itemsize + 4·R·NP =
269 MB at the defaults); no FLOPs.

Expected on an H100 SXM (per design): v1 ~269 MB at ~2.5-3 TB/s ≈ 0.1 ms (256 programs × 16 KB in flight:
enough for the DRAM); v0 1024 dependent steps × ~0.7-1 µs ≈ 0.7-1 ms: ~7-10x. v0's limiter: the latency of
the dependent loads with too little in flight (cause "latency"; no pipe or memory level is busy: resource
None).
Tolerance: a copy: exact (0).
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version

PAGE = 256


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    r, n_pages = p["R"], p["NP"]
    dt = getattr(torch, p["dtype"])
    pool = torch.randn(r * n_pages, PAGE, generator=g, dtype=torch.float32).to(device=device, dtype=dt)
    table = torch.randperm(r * n_pages, generator=g).view(r, n_pages).to(torch.int32)
    nxt = torch.full((r * n_pages,), -1, dtype=torch.int32)
    nxt[table[:, :-1].reshape(-1).long()] = table[:, 1:].reshape(-1)
    return {
        "pool": pool,
        "table": table.to(device),
        "head": table[:, 0].contiguous().to(device),
        "next": nxt.to(device),
        # Poisoned output: NaN wherever a version fails to write shows up in the check.
        "out": torch.full((r, n_pages * PAGE), float("nan"), device=device, dtype=dt),
    }


def _reference(inputs, p):
    return inputs["pool"][inputs["table"].long()].reshape(p["R"], p["NP"] * PAGE)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(2 * p["R"] * p["NP"] * PAGE * p.itemsize + 4 * p["R"] * p["NP"])


_STAGE = StageModel("gather_pages", flops=lambda p: 0.0, bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_page_chain",
    description="Calibration (held back, set 10; planted: pages found by following a linked list): each "
    "sequence's 1024 scattered 256-value pages gathered into a contiguous buffer; v0 walks the next-page "
    "list, v1 reads a page table and fetches 32 pages at once",
    params=(
        Param("R", 256, min=1, max=4096, doc="sequences (one program each)"),
        Param("NP", 1024, min=1, max=8192, doc="pages per sequence"),
        Param("dtype", "float16", choices=("float16", "float32"), doc="values' dtype"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: the next-page linked list walked page by page", (_STAGE,), _build("v0")),
        Version("v1", "fix: the page table, 32 pages fetched at once", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: _bytes(p) + float(2 * 4 * p["R"] * p["NP"]),
    tolerance=lambda dtype: 0.0,
)
