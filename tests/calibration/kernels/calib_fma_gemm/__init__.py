"""Calibration pair — tensor cores idle on dot-heavy work: C = A @ B in fp32 (A [M, K] and
B [K, N] row-major fp32, C [M, N] fp32), M = N = K = 4096 by default.

Planted problem (v0): a tiled Triton GEMM (128x128x32 tiles, 8 warps, 3 stages, grouped launch
order, one program per C tile) whose ``tl.dot(a, b, acc, input_precision="ieee")`` asks for
exact fp32 products. Triton lowers that dot to FFMA instructions on the SIMT FP32 pipes: no
HMMA/HGMMA in the SASS, the tensor cores idle on the one kind of work they exist for.
Fix (v1): the same kernel, tiles, warps, stages, grid and loads with ``input_precision="tf32"``:
operands rounded to TF32 (10-bit mantissa), multiplied by wgmma on the tensor cores,
accumulated in fp32. The Triton interpreter ignores input_precision (both versions compute in
fp32 on the CPU).

Tolerance 2e-3 relative L2: TF32 on random normal data gives 7.8e-4 at 4096^3 (v0: 1.2e-6).

Model: 2·M·N·K FLOPs; (M·K + K·N + M·N)·4 bytes (each operand read once, C written once).
``tensor_cores=True`` in both versions: the roof of this work is the TF32 tensor-core peak
(494.7 TFLOP/s: T_sol = 137.4 GFLOP / 494.7 TFLOP/s = 278 µs at the defaults), so v0's headroom
is what the tensor cores would give. Arithmetic intensity 137.4 GFLOP / 201 MB = 683 FLOP/B.

Counters Nsight Compute should show for v0 (measured, H100 SXM, ncu --clock-control none): FMA pipe
67.6 % of peak (sm__pipe_fma_cycles_active), tensor pipe 0 % (sm__pipe_tensor_cycles_active; 0
gmma instructions), smsp__sass_thread_inst_executed_op_ffma_pred_on.sum = M·N·K = 6.87e10 (one
FFMA per multiply-add), SM throughput 73 %, issue active 76 % with the warps' cycles on
selected / not_selected / dispatch_stall (issue-bound on the FMA pipe, no memory stall), DRAM 4.9 %,
no shared-memory bank conflicts, no spills (188 registers: one 8-warp program per SM,
occupancy 12.5 %, 7.76 waves). Compute-bound, on the wrong unit.
v1: tensor pipe 17.5 %, 4.19 M gmma instructions, no FFMA in the dot.

Expected speed-up on an H100: v0 ≈ 137.4 GFLOP / (66.9 TFLOP/s FP32 × ~65 % FMA-pipe use) ≈ 3.2 ms
(cuBLAS fp32 without TF32: 2.66 ms). v1's floor is 278 µs (cuBLAS TF32: 380 µs), but this kernel
reaches only ~84 TFLOP/s: with B row-major (N contiguous), Triton 3.6's tf32 wgmma needs K-major
B tiles and transposes every B tile through shared memory (in v1, 79 % of the shared wavefronts
are bank conflicts, L1 at 90 %, stalls lg_throttle / long_scoreboard) → ~1.63 ms: ~1.9x (+94 %).
A diagnosis that credits v0 with the whole TF32 headroom (1 − 278/3168 → +1040 %) overstates what
this fix measures.

Why B row-major: it is the layout that keeps v0 clean. With B stored K-major (a linear layer's
weight, b = w.t()), v1 runs at 252 TFLOP/s (545 µs) but v0's FMA path then reads its B tiles with
bank conflicts (70 % of 1.35 G shared wavefronts, FMA pipe 34.6 %, 6.2 ms): two causes in v0.
No B layout, tile (128x128x{16,32,64}, 128x64, 64x128, 64x64, 128x256) or stage count (1-4)
tried made both paths clean in Triton 3.6.

Measured (H100 SXM, torch 2.11, Triton 3.6, triton.testing.do_bench median, two rounds,
2026-11-24): v0 3168 µs (43.4 TFLOP/s), v1 1632-1639 µs (84 TFLOP/s) → 1.94x.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    M, N, K = params["M"], params["N"], params["K"]
    a = torch.randn(M, K, generator=g, device=device, dtype=torch.float32)
    b = torch.randn(K, N, generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever the kernel fails to write shows up in the check.
    c = torch.full((M, N), float("nan"), device=device, dtype=torch.float32)
    return {"a": a, "b": b, "c": c}


def _reference(inputs, params):
    return (inputs["a"].double() @ inputs["b"].double()).float()


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel(
    "gemm",
    flops=lambda p: 2.0 * p["M"] * p["N"] * p["K"],
    bytes=lambda p: 4.0 * (p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]),
    tensor_cores=True,
)

KERNEL = KernelPackage(
    name="calib_fma_gemm",
    description="Calibration (tensor cores idle): fp32 GEMM; v0's tl.dot(input_precision='ieee') runs on the "
                "FP32 FMA pipes, v1 is the same kernel and tiles with input_precision='tf32' (tensor cores).",
    params=(
        Param("M", 4096, min=1, max=1 << 15, doc="rows of A and C"),
        Param("N", 4096, min=1, max=1 << 15, doc="columns of B and C"),
        Param("K", 4096, min=1, max=1 << 15, doc="inner dimension"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: tl.dot(input_precision='ieee'): exact fp32 products on the FMA pipes, tensor "
                      "cores idle", (_STAGE,), _build("v0")),
        Version("v1", "fix: the same kernel, tiles and grid with input_precision='tf32': the dot on the tensor "
                      "cores", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: 4.0 * (p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]),
    # TF32 rounds each operand to a 10-bit mantissa: ~3e-4 relative L2 error on random data.
    tolerance=lambda dtype: 2e-3,
)
