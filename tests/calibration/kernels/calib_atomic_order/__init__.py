"""Calibration pair (twelfth held-back set) — scatter-add atomics with acquire-release ordering where relaxed
atomics suffice: a graph neural network's message aggregation (out[dst[e], :] += w[e] · x[src[e], :]) written
with ``tl.atomic_add``, whose default memory semantics in Triton are ``acq_rel``: each atomic is ordered
after every earlier memory access of the thread (a release fence) and before every later one (an acquire:
the atomic's return awaited, the L1 invalidated), so a program's loop of gathers and atomics runs one round
trip after another. Nothing reads the sums until the kernel ends: ``sem="relaxed"`` (CUDA's own atomicAdd
is relaxed) is enough, and lets the atomics be fire-and-forget reductions. Sources: Triton's
``tl.atomic_add`` documentation (sem defaults to "acq_rel"); PyTorch Inductor emits
``tl.atomic_add(..., sem='relaxed')`` for its scatter-adds; Dao-AILab/flash-attention issue #1031 and
triton-lang/triton PR #4227 ("change default fence as relaxed for atomic instructions": GNN models on an
A100 up to 1.3x faster); the CUDA C++ Programming Guide, "Memory Fence Functions" and "Atomic Functions".

The work: a graph of NODES = 2^17 nodes with D = 32 features each (x fp16, fp32 allowed; out fp32, 16 MB: it
fits the L2) and EDGES = 2^22 edges (32 a node on average), stored sorted by source (consecutive edges
share a source row), destinations uniform: out = 0; out[dst[e], :] += w[e] · x[src[e], :]. One program of
4 warps per EPP = 256 consecutive edges, looping over them 32 edges (32 x 32 values) at a time: gather,
scale, atomically add.

Planted problem (v0): ``tl.atomic_add(out + ..., msg, mask)`` with the default sem="acq_rel": every atomic
instruction fenced on both sides; the 8 chunks of a program and the atomics within a chunk serialised,
each waiting for the L2 round trip of the last (and the L1 invalidated after each).
Fix (v1): the same kernel with ``sem="relaxed"``; the same atomics (the sums are only read after the kernel).
Both zero out first (a memset of 16 MB, part of each version's run).

Model: x read once, the edges (src, dst int32, w fp32) read once, out written once, its zeroing once (bytes
NODES·D·(itemsize + 4 + 4) + 12·EDGES ≈ 92 MB at the defaults); FLOPs 2·EDGES·D (scale and add).

Expected on an H100 SXM (per design): v1 bound by the L2's atomic throughput on 134 M fp32 additions and the
~0.1 GB of DRAM traffic: ~0.1 ms; v0 each thread's ~16 fenced atomics one after another (~1 µs each), 16
programs resident an SM, ~8 rounds: ~0.2-0.4 ms: ~2-4x. Cause "atomics" (the atomics' ordering, not their
number, is the cost: the fix keeps every atomic); resource None (the waits are round trips; no pipe or level
is busy by design).
Tolerance: sums of ~32 fp32 products in an arbitrary order (atomics): 1e-5 relative.
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    nodes, edges, d = p["NODES"], p["EDGES"], p["D"]
    if d & (d - 1):
        raise ValueError(f"D ({d}) must be a power of two")
    src = torch.sort(torch.randint(0, nodes, (edges,), generator=g)).values
    dst = torch.randint(0, nodes, (edges,), generator=g)
    return {
        "x": torch.randn(nodes, d, generator=g).to(device=device, dtype=dt),
        "src": src.to(torch.int32).to(device),
        "dst": dst.to(torch.int32).to(device),
        "w": (torch.rand(edges, generator=g) + 0.5).to(device),
        # Poisoned output: a version that does not zero it first (or does not add) fails the check.
        "out": torch.full((nodes, d), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    msg = inputs["w"].double()[:, None] * inputs["x"].double()[inputs["src"].long()]
    out = torch.zeros(p["NODES"], p["D"], dtype=torch.float64, device=msg.device)
    return out.index_add_(0, inputs["dst"].long(), msg).float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(p["NODES"] * p["D"] * (p.itemsize + 8) + 12 * p["EDGES"])


_STAGE = StageModel("aggregate", flops=lambda p: float(2 * p["EDGES"] * p["D"]), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_atomic_order",
    description="Calibration (held back, set 12; planted: scatter-add atomics with acquire-release ordering "
    "where relaxed suffices): GNN aggregation out[dst] += w * x[src] (2^22 edges, 32 features); v0 "
    "tl.atomic_add with its default sem='acq_rel', v1 sem='relaxed'",
    params=(
        Param("NODES", 1 << 17, min=1, max=1 << 24, doc="nodes (rows of x and out)"),
        Param("EDGES", 1 << 22, min=1, max=1 << 28, doc="edges"),
        Param("D", 32, min=1, max=256, doc="features a node (a power of two)"),
        Param("dtype", "float16", choices=("float16", "float32"), doc="x dtype (out is float32)"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: tl.atomic_add with the default sem='acq_rel'", (_STAGE,), _build("v0")),
        Version("v1", "fix: tl.atomic_add(..., sem='relaxed')", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: float(p["NODES"] * p["D"] * (p.itemsize + 4) + 12 * p["EDGES"]),
    tolerance=lambda dtype: 1e-5,
)
