"""Calibration pair (thirteenth held-back set) — a float atomic max emulated with a compare-and-swap loop
where the native atomic exists: a scatter-max (segment max: out[seg[i]] = max(out[seg[i]], x[i]), the max
pooling of points into voxels of PointNet-style encoders, torch_scatter's scatter_max, a GNN's max
aggregation) written the way CUDA code writes a float atomicMax, which CUDA C++ does not provide: read the
word, compute the max, atomicCAS it in, retry while another thread changed it in between. Each try is a
returned-value atomic (an L2 round trip the thread waits for) after a load, and under contention most tries
fail and go round again. Triton's ``tl.atomic_max`` on fp32 is native (a signed-integer max for
non-negative values, an unsigned min for negative ones: one fire-and-forget atomic). Sources: the CUDA C++
Programming Guide, "Atomic Functions" (its atomicAdd for double built on atomicCAS: "any atomic operation
can be implemented based on atomicCAS()", with the retry loop), the float-atomicMax-by-CAS idiom of CUDA
code (and the integer-bit alternative), Triton's ``tl.atomic_max`` / ``tl.atomic_cas`` documentation.

The work: N = 2^24 fp32 values (fp16 allowed), each with a segment id uniform over S = 2^16 segments (256
values a segment on average; the 256 KB output lives in the L2): out = -inf; out[seg[i]] max= x[i]. One
program of 4 warps per BLOCK = 1024 values; both versions use sem="relaxed" (the result is read after the
kernel), so the only difference is the atomic's kind.

Planted problem (v0): per value, old = load(out[seg]) then a loop, run until every lane of the tile has
succeeded: prev = atomic_cas(out[seg], old, max(old, x)) for the lanes still trying (the others CAS a private
dummy word), done where prev == old, else old = prev.
Fix (v1): tl.atomic_max(out + seg, x, sem="relaxed"): one native atomic a value.
Both reset out to -inf first (a fill of 256 KB, part of each version's run).

Model: x and seg read once, out written once: bytes N·(itemsize + 4) + 4·S; FLOPs N (one max a value).

Expected on an H100 SXM (per design): v1 bound by the L2's atomic units on 2^24 same-line-heavy atomics:
~0.1-0.2 ms; v0 at least a load and a CAS round trip (~1 µs together) a value, the tile's loop running until
its last lane succeeds (collisions within and across programs: 256 writers a segment), ~2-4 tries: ~0.5-1.5
ms: ~3-8x. Cause "atomics" (the atomics' method is the cost: the same updates, one native atomic each
instead of a CAS retry loop); resource None (the waits are round trips, no pipe or level busy by design).
Tolerance: exact (a max is order-independent).
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    n, s = p["N"], p["S"]
    return {
        "x": torch.randn(n, generator=g).to(device=device, dtype=dt),
        "seg": torch.randint(0, s, (n,), generator=g).to(torch.int32).to(device),
        "dummy": torch.zeros(1024, device=device, dtype=torch.float32),  # v0's idle lanes' CAS target
        # Poisoned output: a version that does not reset it (or does not write) fails the check.
        "out": torch.full((s,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    out = torch.full((p["S"],), float("-inf"), dtype=torch.float32, device=inputs["x"].device)
    return out.scatter_reduce(0, inputs["seg"].long(), inputs["x"].float(), reduce="amax")


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(p["N"] * (p.itemsize + 4) + 4 * p["S"])


_STAGE = StageModel("scatter_max", flops=lambda p: float(p["N"]), bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_cas_max",
    description="Calibration (held back, set 13; planted: a float atomic max emulated with a compare-and-swap "
    "loop): scatter-max of 2^24 values into 2^16 segments; v0 load + atomic_cas retry loop, v1 tl.atomic_max "
    "(both relaxed)",
    params=(
        Param("N", 1 << 24, min=1, max=1 << 28, doc="values"),
        Param("S", 1 << 16, min=1, max=1 << 26, doc="segments (outputs)"),
        Param("dtype", "float32", choices=("float32", "float16"), doc="x dtype (out is float32)"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: load + atomic_cas retry loop a value", (_STAGE,), _build("v0")),
        Version("v1", "fix: tl.atomic_max (native) a value", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)
