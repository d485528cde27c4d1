"""Calibration pair (twenty-fourth held-back set) — per-program partial sums merged into one shared buffer under
one spin lock: the "parallel reduction strategy" of the Triton tutorial "Layer Normalization" (backward pass: each
program accumulates its partial dW into one of GROUP_SIZE_M buffers, each guarded by a lock taken with
tl.atomic_cas and released with tl.atomic_xchg; a second kernel sums the buffers) with GROUP_SIZE_M = 1, so every
program queues on the same lock and the merges run one after another. The fix: 64 buffers and locks (program p
takes lock p % 64, as the tutorial does), the merges mostly concurrent; the same sums (in another order: fp32,
within the tolerance). Sources: Triton tutorial 05 "Layer Normalization" (GROUP_SIZE_M, "the lock"), CUDA C++
Programming Guide ("Atomic Functions": atomicCAS/atomicExch, contention on one address serialises).

The work: dw[n] = sum over m of dy[m, n] * xhat[m, n] (a LayerNorm weight gradient), dy and xhat [M, N] fp16,
dw fp32 [N]. One program ROWS rows (RB rows a step, all N columns), its partial [N] in registers, then merged.

Planted problem (v0): stage "partials_one_lock": GROUP = 1 (one lock, one buffer): 264 programs (two an SM)
each take the lock, read the buffer (4 KB), add, store, release: 264 critical sections in a row.
Fix (v1): stage "partials_64_locks": GROUP = 64: ~4 programs a lock, 64 merges at a time.
Both: stage "finish" (one program: the GROUP buffers summed into dw, the counts reset).

Model (both): 2 M N FLOPs (multiply-add), bytes dy and xhat read once (the partial buffers are small).

Expected on an H100/H200 (per design): the streaming part ~0.1 ms (277 MB at ~3 TB/s); v0 adds the chain of
264 lock hand-offs, each a few L2 round trips (CAS, count, buffer read, store, barrier, exchange: ~2-3 us under
the spinning of the waiting programs): ~0.5-0.8 ms, so ~4-7x. Cause "atomics" (contended atomics: the lock's
one address every program spins on), resource None.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

GROUPS = {"v0": 1, "v1": 64}


def _inputs(p, device):
    import torch

    m, n = p["M"], p["N"]
    g = torch.Generator(device="cpu").manual_seed(0)
    inputs = {
        "dy": torch.randn(m, n, generator=g).to(torch.float16).to(device),
        "xhat": torch.randn(m, n, generator=g).to(torch.float16).to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((n,), float("nan"), device=device, dtype=torch.float32),
    }
    for v, groups in GROUPS.items():
        # The locks and counts start at 0 (the finish stage resets the counts after each run); the buffers'
        # contents are never read before a program's first store (count 0).
        inputs[f"locks_{v}"] = torch.zeros(groups, device=device, dtype=torch.int32)
        inputs[f"counts_{v}"] = torch.zeros(groups, device=device, dtype=torch.int32)
        inputs[f"buf_{v}"] = torch.empty(groups, n, device=device, dtype=torch.float32)
    return inputs


def _reference(inputs, p):
    import torch

    dy, xh = inputs["dy"], inputs["xhat"]
    out = torch.zeros(p["N"], dtype=torch.float64, device=dy.device)
    for s in range(0, p["M"], 8192):  # in chunks: the float64 product of the whole would be 550 MB
        out += (dy[s : s + 8192].double() * xh[s : s + 8192].double()).sum(0)
    return out.to(torch.float32)


def _build(version):
    def build(inputs, p):
        from . import impl

        return impl.build(inputs, p, version, GROUPS[version])

    return build


def _flops(p):
    return 2.0 * p["M"] * p["N"]


def _bytes(p):
    return 4.0 * p["M"] * p["N"]


def _flops_finish(p):
    return 0.0


def _bytes_finish(version):
    return lambda p: 4.0 * GROUPS[version] * p["N"] + 4.0 * p["N"]


KERNEL = KernelPackage(
    name="calib_lock_partials",
    description="Calibration (held back, set 24; planted: partial sums merged under one spin lock): dw = sum_m "
    "dy*xhat over [67584, 1024] fp16, 264 programs of 256 rows; v0 one lock and buffer (GROUP_SIZE_M = 1), v1 64",
    params=(
        Param("M", 67584, min=1, max=1 << 22, doc="rows (tokens)"),
        Param("N", 1024, min=1, max=4096, doc="columns (the normalised width)"),
        Param("ROWS", 256, min=8, max=1 << 16, doc="rows a program (a multiple of 8)"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: one lock and one partial buffer (GROUP_SIZE_M = 1): the merges serialised",
            (
                StageModel("partials_one_lock", flops=_flops, bytes=_bytes),
                StageModel("finish", flops=_flops_finish, bytes=_bytes_finish("v0")),
            ),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: 64 locks and buffers (program p takes p % 64)",
            (
                StageModel("partials_64_locks", flops=_flops, bytes=_bytes),
                StageModel("finish", flops=_flops_finish, bytes=_bytes_finish("v1")),
            ),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)
