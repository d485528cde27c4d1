"""Calibration pair — register spills: row softmax of an fp32 matrix x[M, N], the whole row in
registers, one program per row.

Planted problem (v0): the row's BLOCK = next_pow2(N) = 8192 fp32 values are shared by ONE warp
(num_warps=1): 8192 / 32 = 256 values per thread, more than the 255 registers a thread can have
before counting addresses, reduction temporaries and the row index. The row is live across two
reductions (max, then sum of exp) and the final scale, so it cannot be streamed: ptxas caps the
kernel at 255 registers and spills the rest to local memory (CompiledKernel.n_regs = 255,
n_spills > 0).

Fix (v1): the same kernel, grid (M programs), loads and stores with num_warps=4:
8192 / 128 = 64 values per thread, 95 registers, n_spills = 0.

Both read x once and write y once (the model, 8·M·N bytes): the same global L1 traffic
(1.07 GB measured in both).
v0 is held to 8 resident warps per SM by its 255 registers (8 one-warp programs per SM:
M / (132·8) = 15.5 waves at the defaults, so no tail effect); v1 has 5 four-warp programs per SM.

Counters Nsight Compute should show: v0 local-memory traffic
(l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum + _st.sum) about a third of all L1 traffic
(l1tex__t_bytes.sum); v1 zero. DRAM bytes stay near the model in both (v0's spill lines
mostly live in L1/L2; a little is written back: ~1.2x the model, under the 1.25 over-fetch line).

Expected speed-up of v1 over v0 on an H100 (M = 16384, N = 8192: 1.07 GB moved): v1 streams at
~3 TB/s (~360 µs, the bandwidth roof); v0 moves the same DRAM bytes plus ~0.5 GB of local
traffic with only 8 warps per SM to hide it: ~1.3x (gain ~30 %). The spill-share estimate
(local / all L1 bytes ≈ 0.33 → +49 %) overstates it because spilled lines mostly hit in L1/L2.

Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-22), tests/calibration/record.py
(annotation profile + 3 event rounds): v0 467 µs (255 regs, n_spills 112), v1 362 µs (95 regs,
0 spills), measured gain +29 %. v0's contract: Memory-bound (DRAM 82.5 %, SM 16 %, occupancy
11.7 %), local 0.52 GB of 1.60 GB L1 bytes, DRAM 1.29 GB (1.20x the model), waves 15.5; top
opportunity "spills" est. +45 % (local_bytes_share 32.8 %; 1.55x the measured gain).
Other shapes seen (M·N = 2^27): N=16384 with 1 warp spills massively (ptxas drops to 64
registers and 32 programs per SM: 4 GB of local traffic, most of it to DRAM, 1.86 ms), so the
spill shows up as DRAM over-fetch of the same size as the spill share: not a clean single cause;
N=16384 with 2 warps: 255 regs, 498 µs; N <= 4096 with 1 warp (128 values per thread): no spill.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    M, N = params["M"], params["N"]
    x = torch.randn(M, N, generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever the kernel fails to write shows up in the check.
    y = torch.full((M, N), float("nan"), device=device, dtype=torch.float32)
    return {"x": x, "y": y}


def _reference(inputs, params):
    import torch

    return torch.softmax(inputs["x"].double(), dim=-1).float()


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel(
    "softmax",
    # per element: max, subtract, exp, add (row sum), divide
    flops=lambda p: 5.0 * p["M"] * p["N"],
    # x read once, y written once (fp32)
    bytes=lambda p: 8.0 * p["M"] * p["N"],
)

KERNEL = KernelPackage(
    name="calib_spill",
    description="Calibration (register spills): row softmax with the whole fp32 row in registers; v0 gives an "
                "8K row to one warp (256 values per thread: spills), v1 to 4 warps (64 per thread: none).",
    params=(
        Param("M", 16384, min=1, max=1 << 18, doc="rows (one program each)"),
        Param("N", 8192, min=1, max=16384,
              doc="row length, held whole in registers (BLOCK = next_pow2(N)); v0 spills for N > 4096"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: the whole row in one warp (num_warps=1): 256 fp32 values per thread at N=8192, "
                      "over the 255-register limit -> spilled to local memory", (_STAGE,), _build("v0")),
        Version("v1", "fix: the same kernel and grid with num_warps=4: 64 values per thread, no spills",
                (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: 8.0 * p["M"] * p["N"],
)
