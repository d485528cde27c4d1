"""Calibration pair — contended global atomics: a 256-bin histogram of n int32 values drawn
uniformly from [0, 256) (n = 2^24 by default), counts in int32; the reference is torch.bincount.

Planted problem (v0): every program loads 4096 contiguous values and adds each one to its bin
with a global ``tl.atomic_add(bins + x, 1)`` (relaxed): n atomics, all on the 256 addresses of
``bins`` (1 KB: 8 cache lines, owned by a few L2 slices that perform every update one after
another, while the other slices idle). A warp's instruction touches ~23 of the 32 sectors of
those 1 KB. Fix (v1): the same kernel, grid, warps and loads; the program counts its 4096
values itself with ``tl.histogram`` (warp ballots, the warps' counts combined in shared memory)
and adds the 256 counts with one 256-wide atomic: n/16 atomics, 8 warp instructions per
program, each on one 128-byte line.

One launch per stage, no memset (the profiler launches a stage many times, and a torch zero_()
would add a fill kernel to the stage's time and its Nsight Compute range): the kernel resets its
workspace itself, as calib_atomic does. Each program, after its adds (a barrier orders all its
threads' atomics first), draws a ticket from ``count`` with an acq_rel atomic, which releases
its adds; the program that draws the last ticket takes every bin with ``tl.atomic_xchg(bins, 0)``
(reads the total and zeroes the bin in ONE atomic: no window in which a bin is read but not yet
cleared), writes the totals to ``out`` and resets ``count``. Both versions have this epilogue
(one atomic instruction per program, the ticket, plus 8 exchange instructions in the last one:
smsp__sass_inst_executed_op_global_atom.sum = 4,104 at the defaults). Rejected alternative:
never reset the bins and output the difference with the previous launch's totals; that needs a
snapshot of the bins before the launch (a second kernel or a copy in the stage) and a bin could
overflow int32 after enough launches.

Counts are exact, so the tolerance is 0: one lost or doubled atomic fails the check.

Model: 0 FLOPs (integer counting); 4·n + 4·256 bytes (x read once, the counts written once).

Counters Nsight Compute should show for v0 (measured at n = 2^24): global reduction instructions
l1tex__t_requests_pipe_lsu_mem_global_op_red.sum = n/32 = 524,288, touching 11.9 M L2 sectors
(lts__t_sectors_srcunit_tex_op_red.sum, 22.6 per instruction); SM throughput 0.24 %, DRAM 0.48 %,
L2 throughput 2.9 % (only the slices owning the bins work), issue active 0.24 %; stalls
long_scoreboard 38 %, short_scoreboard 26 %, barrier 26 % of the warps' cycles (warps wait at the
barrier and the acq_rel ticket for their reductions to drain); occupancy 61 %, 6.2 waves. So:
latency-bound, the atomics' throughput on a few addresses is the limit: 16.8 M atomics in 4.33 ms
= 3.9 G atomics/s (2.7 G L2 sector updates/s) for the whole GPU.
v1: 32,768 reduction instructions (131 K sectors), ALU pipe 90 % (tl.histogram's ballots: v1 is
ALU-bound), DRAM 37 %.

Expected speed-up on an H100 (n = 2^24, 67 MB): v1's floor is 67 MB / 3.35 TB/s = 20 µs; it runs in
~58 µs (ALU-bound counting; torch.bincount of 2^26 values takes 636 µs, v1 211 µs); v0 ≈ n / 3.9 G
atomics/s ≈ 4.3 ms → ~74x. The v0 time scales with n: at n = 2^26 it took 17.3 ms (v1 211 µs), past
the 5 ms window, hence the default 2^24.

Measured (H100 SXM, torch 2.11, Triton 3.6, triton.testing.do_bench median, two rounds, 2026-11-24):
v0 4330-4334 µs, v1 58.3-59.3 µs → 74x; every launch gave the exact counts and left bins and
count at 0.
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version

NUM_BINS = 256


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randint(0, NUM_BINS, (params["n"],), generator=g, device=device, dtype=torch.int32)
    bins = torch.zeros(NUM_BINS, device=device, dtype=torch.int32)   # the 256 addresses every atomic hits
    count = torch.zeros(1, device=device, dtype=torch.int32)         # programs done (the last one resets)
    out = torch.full((NUM_BINS,), -1, device=device, dtype=torch.int32)  # poisoned until written
    return {"x": x, "bins": bins, "count": count, "out": out}


def _reference(inputs, params):
    import torch

    return torch.bincount(inputs["x"].long(), minlength=NUM_BINS).to(torch.int32)


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel(
    "histogram",
    flops=lambda p: 0.0,                                   # integer counting: no floating-point work
    bytes=lambda p: 4.0 * p["n"] + 4.0 * NUM_BINS,         # x read once, the 256 counts written once
)

KERNEL = KernelPackage(
    name="calib_histogram",
    description="Calibration (contended atomics): 256-bin histogram of n int32 values; v0 does one global "
                "atomic per value on the 256 bins, v1 counts each block with tl.histogram and adds 256 per program.",
    params=(
        Param("n", 1 << 24, min=1, max=1 << 30, doc="values, uniform in [0, 256)"),
        Param("dtype", "int32", choices=("int32",), doc="element type of the values and the counts"),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: one global atomic_add per value, all n on the 256 bin addresses",
                (_STAGE,), _build("v0")),
        Version("v1", "fix: the same kernel, grid and loads; tl.histogram per block, then one atomic per bin "
                      "per program", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: 4.0 * p["n"] + 12.0 * NUM_BINS + 4.0,
    # Counts are exact: one lost or doubled atomic is an error.
    tolerance=lambda dtype: 0.0,
)
