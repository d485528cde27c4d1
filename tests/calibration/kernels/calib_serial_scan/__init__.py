"""Calibration pair (fifth held-back set) — a linear recurrence walked one time step at a time, each
step's loads issued only after the previous step's update and store: one memory latency per step, the
machine's memory pipe nearly empty (Nsight Compute's warp-state statistics: stalls on long scoreboard
with little issue and few warps; CUDA C++ Best Practices Guide, "Expose as much parallelism as
possible" and memory latency hiding: many independent loads in flight).

The work: the gated linear recurrence of an RG-LRU / diagonal-SSM layer, h_t = a_t * h_{t-1} + x_t per
channel (h_{-1} = 0), y_t = h_t, for B = 8 sequences of T = 4096 steps and C = 2048 channels, a, x and y
[B, T, C] bf16 (fp16 allowed for the CPU interpreter), fp32 state: 403 MB moved at the defaults. One
program per (sequence, 128 channels), 4 warps: 128 programs, one channel per thread.

Planted problem (v0): the time loop as written in the maths: per step, load a_t and x_t (256 bytes per
warp), update h, store y_t. The step's loads wait for nothing, but they follow the previous step's store
and the loop is issued in order, so every step costs a full load latency; with 16384 channels (~4 warps
per SM) nothing else hides it. DRAM is far from busy.
Fix (v1): the same recurrence over chunks of CHUNK = 32 steps: a [32, 128] tile of a and of x loaded at
once, the chunk solved with tl.associative_scan (pairs (a, x) combined as (a1 a2, a2 x1 + x2)), the carry
h applied and passed to the next chunk: 32 steps' loads in flight per thread.

Model: a and x read once, y written once (bytes 3·2·B·T·C = 403 MB), 2 FLOPs per element (2·B·T·C).

Expected on an H100 SXM (per design): v0 4096 steps x ~0.6-0.8 µs of load latency → ~2.5-3.3 ms; v1
~16 KB-32 KB of loads in flight per SM → near the DRAM peak, ~150-250 µs: ≈ 10x or more. v0's limiter is
latency (cause "latency"; resource None: no pipe or memory level near its peak).
Tolerance: fp32 recurrences of 4096 steps with |a| < 1, stored in bf16: 1e-2 relative.
Measured (H200, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 1787 µs
(225 GB/s, scalar ld.global.b16 per step), v1 359 µs (1.1 TB/s, 141 registers, 16 KB of shared memory for the
scan across warps): 5.0x; recorded event medians v0 1826 µs, v1 356 µs (+413 %). (A first v1, its carry taken
with tl.reduce over the non-commutative combine, was wrong on the GPU — err 0.19 — and fixed before recording.)
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    dt = getattr(torch, p["dtype"])
    g = torch.Generator(device=device).manual_seed(seed)
    shape = (p["B"], p["T"], p["C"])
    # Decay gates in (0.5, 1): long memories, as an RG-LRU's a_t = sigmoid(...)^c
    a = (0.5 + 0.5 * torch.rand(shape, generator=g, device=device, dtype=torch.float32)).to(dt)
    x = torch.randn(shape, generator=g, device=device, dtype=torch.float32).to(dt)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"a": a, "x": x, "y": torch.full(shape, float("nan"), device=device, dtype=dt)}


def _reference(inputs, p):
    import torch

    a, x = inputs["a"].double(), inputs["x"].double()
    h = torch.zeros_like(a[:, 0])
    ys = []
    for t in range(a.shape[1]):
        h = a[:, t] * h + x[:, t]
        ys.append(h)
    return torch.stack(ys, dim=1).to(inputs["y"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(3 * p["B"] * p["T"] * p["C"] * p.itemsize)


_STAGE = StageModel("scan", flops=lambda p: 2.0 * p["B"] * p["T"] * p["C"], bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_serial_scan",
    description="Calibration (held back, set 5; planted: a recurrence walked step by step, one load latency "
    "per step): h_t = a_t h_{t-1} + x_t over [8, 4096, 2048] bf16; v0 one step per iteration, v1 chunks of "
    "32 steps loaded at once and solved with tl.associative_scan",
    params=(
        Param("B", 8, min=1, max=1 << 12, doc="sequences"),
        Param("T", 4096, min=1, max=1 << 20, doc="time steps"),
        Param("C", 2048, min=1, max=1 << 16, doc="channels"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: one time step per loop iteration (load a_t, x_t; update; store y_t)",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: 32-step chunks loaded as tiles and solved with tl.associative_scan, the carry between chunks",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-2 if dtype == "bfloat16" else 2e-3,
)
