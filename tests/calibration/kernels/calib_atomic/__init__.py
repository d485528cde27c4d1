"""Calibration pair — a serialising reduction: total = sum(x) over n fp32 values in [0, 1).

Planted problem (v0): each program loads 8192 elements, sums them in groups of 128 and
atomically adds every group sum into the ONE accumulator address: n / 128 fp32 atomics
(524,288 at the default n = 2^26), which the L2 slice owning that address performs one after
another (~0.55 G/s on an H100). Fix (v1): the same kernel, grid and loads;
each program reduces its block with tl.sum and issues one atomic (n / 8192 = 8192 atomics).

Why groups and not one atomic per element: per element, n = 2^26 takes 118 ms on an H100 (far
outside the calibration's time window) and is wrong: an fp32 accumulator stops growing at
2^24 ≈ 1.7e7, where its ulp is 2 and adding a value below 1 rounds to nothing (measured: half
the true sum).

One launch per stage, no memset: the kernel resets itself. Every program, after its adds (a
barrier orders all its threads' atomics first), draws a ticket from a counter; the last one
reads the total from the accumulator (an atomic add of 0), writes it to out[0] and resets the
accumulator and the counter to 0 for the next launch. So the stage's only kernel is the one
measured (a torch zero_() in the stage would add a fill kernel to its time and its Nsight
Compute range). Both versions have this epilogue: 2 atomics per program on two addresses.

Float atomics add in an arbitrary order, and v0 rounds ~n/128 times into an accumulator near
n/2 ≈ 3.4e7 (ulp 4): relative errors ~1e-5 at the default n (measured 1.5e-5; simulated up to
~7e-5 at n = 2^30), so the tolerance is 2e-4 relative.

Counters Nsight Compute should show for v0: DRAM throughput under 10 % and SM throughput ~2 %
(latency-bound); global atomic instructions smsp__sass_inst_executed_op_global_atom.sum =
n/128/32 per-warp instructions (each 32 lanes on one address) + 2 per program (32,769 at the
defaults), all on one L2 address; a duration ~12x its bytes' time (268 MB at 3.35 TB/s = 80 µs).
v1: the same loads at ~87 % of DRAM peak, 2 atomic instructions per program.

Expected speed-up of v1 over v0 on an H100 (n = 2^26, 268 MB): v1 ≈ 268 MB / 2.65 TB/s ≈ 100 µs
(torch.sum of the same x: 104 µs); v0 ≈ 524 K atomics / 0.55 G/s ≈ 0.95 ms → ~9.5x. The
diagnosis has no specific cause to name here: its "latency" share is the whole headroom
1 − T_sol/T (+1100 %) for a measured ~+860 % (v1 reaches ~80 % of the datasheet peak, not 100 %).

Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-22):
  tests/calibration/record.py (annotation profile + 3 event rounds): v0 981 µs, v1 102 µs, measured
  gain +858 %; v0's contract: Latency-bound, DRAM 8.4 %, SM 1.8 %, occupancy 97.5 %, waves 7.76,
  top opportunity "latency" est. +1099 % (1.28x the measured gain).
  Sweep, n = 2^26, 8192 programs, one atomic per G elements, G = 1 / 4 / 16 / 32 / 64 / 256:
  118 ms / 29.6 / 7.47 / 3.74 / 1.90 / 0.51 ms (0.51-0.57 G same-address atomics/s throughout;
  ncu's time at its locked clocks matched event time within 1 %); G = 8192 (v1): 101 µs, 2.65 TB/s.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.rand(params["n"], generator=g, device=device, dtype=torch.float32)  # sum ≈ n/2, far from 0
    acc = torch.zeros(1, device=device, dtype=torch.float32)     # the one address every atomic hits
    count = torch.zeros(1, device=device, dtype=torch.int32)     # programs done (the last one resets both)
    out = torch.full((1,), float("nan"), device=device, dtype=torch.float32)  # poisoned until written
    return {"x": x, "acc": acc, "count": count, "out": out}


def _reference(inputs, params):
    return inputs["x"].double().sum().reshape(1).float()


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel(
    "sum",
    flops=lambda p: float(p["n"]),           # one add per element
    bytes=lambda p: 4.0 * p["n"] + 4.0,      # x read once, the 4-byte total written once
)

KERNEL = KernelPackage(
    name="calib_atomic",
    description="Calibration (serialised atomics): sum of n fp32 values; v0 atomically adds every 128-element "
                "partial sum into one address, v1 one atomic per 8192-element block.",
    params=(
        Param("n", 1 << 26, min=1, max=1 << 30, doc="elements"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: 64 atomics per program (one per 128 elements), all into one accumulator "
                      "address: n/128 serialised atomics", (_STAGE,), _build("v0")),
        Version("v1", "fix: the same kernel and grid, tl.sum of the 8192-element block then one atomic",
                (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: 4.0 * p["n"] + 12.0,
    tolerance=lambda dtype: 2e-4,
)
