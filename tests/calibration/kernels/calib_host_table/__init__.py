"""Calibration pair (seventh held-back set) — an embedding table kept in pinned host memory and read by
the kernel over PCIe (zero-copy, "mapped" host memory) at every call, though it fits in the GPU's memory
(CUDA C++ Best Practices Guide, "Data transfer between host and device" and "Zero copy": mapped host
memory suits data read once; data read again and again belongs in device memory, copied there once;
Nsight Compute's memory workload analysis: the loads go to system memory, not to the device's DRAM).

The work: an embedding lookup, out[i, :] = table[ids[i], :], for N = 8192 token ids into a table of
V = 32000 rows of D = 4096 bf16 (262 MB), one program of 4 warps per token (its 8 KB row, contiguous,
16-byte vector loads and stores).

Planted problem (v0): the table read from its pinned host copy (a CPU tensor in page-locked memory: with
unified addressing its address is valid on the device), every row crossing PCIe at each call (67 MB,
a few tens of GB/s against the HBM's ~3 TB/s).
Fix (v1): the same kernel reading the device copy of the table (made once, as ``table.to("cuda")``);
nothing else changes (grid, block, loads, stores).

Model: the gathered rows read once and the output written once (2·N·D·2 bytes = 134 MB) plus the ids; no
FLOPs (a copy: flops 0).

Expected on an H100 SXM (per design): v1 ~134 MB at ~2.5-3 TB/s → ~50 µs; v0 67 MB over PCIe Gen5 x16 at
~20-50 GB/s → ~1.5-3 ms: ≥ 20x. v0's time is the host link's: no pipe and no memory level of the GPU is
busy (resource None); the cause is bytes moved between host and device at every call ("copy", the
nearest key: a host-device transfer repeated per call instead of made once).
Tolerance: a copy: exact (0).
Measured (H100, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 1331 µs
(101 GB/s of the model's bytes: the rows at ~50 GB/s over PCIe), v1 50.5 µs (2.66 TB/s), the same PTX: 26x;
recorded event medians v0 1315 µs, v1 49.2 µs (+2575 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    v, d, n = p["V"], p["D"], p["N"]
    dt = getattr(torch, p["dtype"])
    table = torch.randn(v, d, generator=g, device=device, dtype=torch.float32).to(dt)
    ids = torch.randint(0, v, (n,), generator=g, device=device, dtype=torch.int64)
    # The host copy: page-locked (mapped) where a GPU exists, a plain CPU tensor for the interpreter.
    host = table.cpu().pin_memory() if device != "cpu" else table.clone()
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    out = torch.full((n, d), float("nan"), device=device, dtype=dt)
    return {"ids": ids, "table": table, "table_host": host, "out": out}


def _reference(inputs, p):
    return inputs["table"][inputs["ids"]]


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    esize = {"bfloat16": 2, "float16": 2, "float32": 4}[p["dtype"]]
    return float(2 * p["N"] * p["D"] * esize + 8 * p["N"])


_STAGE = StageModel("embedding", flops=lambda p: 0.0, bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_host_table",
    description="Calibration (held back, set 7; planted: an embedding table read from pinned host memory "
    "over PCIe at every call): out[i] = table[ids[i]]; v0 reads the zero-copy host table, v1 its device copy",
    params=(
        Param("N", 8192, min=1, max=1 << 22, doc="token ids looked up"),
        Param("V", 32000, min=1, max=1 << 20, doc="table rows (vocabulary)"),
        Param("D", 4096, min=1, max=16384, doc="row width (one program holds a row)"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the table read from its pinned host copy (zero-copy over PCIe) at every call",
            (_STAGE,),
            _build("v0"),
        ),
        Version("v1", "fix: the table's device copy read (made once)", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
