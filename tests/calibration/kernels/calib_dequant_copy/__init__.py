"""Calibration pair (twenty-sixth held-back set) — a weight-only int8 quantised linear layer at decode time
(W8A16: a few tokens' activations in fp16, the weights int8 with one fp16 scale per output column) whose weights
are dequantised into a full fp16 copy in global memory before every matrix product, then the product reads that
copy: the dequantisation's output (twice the int8 weights' bytes) is written and read back at every call, where
converting each int8 tile in the product's own loads (and applying the column scales to the accumulator) reads
only the int8 weights. The same result up to rounding. Sources: the CUDA C++ Best Practices Guide ("Minimize data
transfer ... between global memory and the device", keep intermediates on chip); the Triton tutorial "Matrix
Multiplication" (operands converted after the load, the epilogue applied to the accumulator); Frantar et al.,
"GPTQ" (ICLR 2023) and Lin et al., "AWQ" (MLSys 2024): fused dequantising GEMV/GEMM kernels for memory-bound
decoding (the point of weight-only quantisation is reading 1 byte a weight).

The work: Y [M, N] fp16 = X [M, K] fp16 @ (Wq [K, N] int8 * s [N] fp16), M = 16 tokens, K = 8192, N = 16384.

Planted problem (v0): stage "dequant": W16 = Wq * s as fp16 [K, N] (reads 128 MiB, writes 256 MiB); stage
"gemm": Y = X @ W16 (tl.dot over K, reads the 256 MiB copy): ~640 MiB of DRAM traffic a call.
Fix (v1): stage "gemm_int8": the same product with each [BLOCK_K, BLOCK_N] int8 tile converted to fp16 after
its load and the scales applied to the fp32 accumulator: ~128 MiB (the int8 weights once).

Model: 2 M K N FLOPs (tensor cores); bytes: the int8 weights, the scales, X and Y once (the needed traffic, for
both: v0's dequant stage carries the weights' read, its gemm stage X and Y).

Expected on an H100/H200 (per design): v1 ~40-60 us (128 MiB at 2.5-4 TB/s, 256 programs of a BLOCK_M = 16 tile);
v0 ~100 us for the copy (384 MiB) and ~70-110 us for its product: ~3-4x. Cause "fusion" (two kernels where one
keeps the dequantised tile on chip: the fix removes the fp16 copy's write and re-read), resource "dram".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    m, k, n = p["M"], p["K"], p["N"]
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(m, k, generator=gen).to(torch.float16)
    wq = torch.randint(-127, 128, (k, n), generator=gen, dtype=torch.int8)
    s = ((0.5 + torch.rand(n, generator=gen)) / (127.0 * k**0.5)).to(torch.float16)
    return {
        "X": x.to(device),
        "Wq": wq.to(device),
        "S": s.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((m, n), float("nan"), device=device, dtype=torch.float16),
    }


def _reference(inputs, p):
    w = inputs["Wq"].double() * inputs["S"].double()[None, :]
    return (inputs["X"].double() @ w).to(inputs["X"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * p["M"] * p["K"] * p["N"]


def _bytes(p):
    return 1.0 * p["K"] * p["N"] + 2.0 * p["N"] + 2.0 * p["M"] * p["K"] + 2.0 * p["M"] * p["N"]


def _flops_dequant(p):
    return 1.0 * p["K"] * p["N"]


def _bytes_dequant(p):
    return 1.0 * p["K"] * p["N"] + 2.0 * p["N"]


def _bytes_gemm(p):
    return 2.0 * p["M"] * p["K"] + 2.0 * p["M"] * p["N"]


KERNEL = KernelPackage(
    name="calib_dequant_copy",
    description="Calibration (held back, set 26; planted: int8 weights dequantised into a full fp16 copy before "
    "every decode GEMM): Y = X [16, 8192] fp16 @ (Wq [8192, 16384] int8 * s); v0 a dequantising kernel writes "
    "the fp16 weights and a GEMM reads them, v1 one GEMM converting each int8 tile after its load",
    params=(
        Param("M", 16, min=1, max=4096, doc="tokens (rows of X and Y)"),
        Param("K", 8192, min=1, max=65536, doc="input features (rows of Wq)"),
        Param("N", 16384, min=1, max=131072, doc="output features (columns of Wq)"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the int8 weights dequantised into a full fp16 copy, then a GEMM over the copy",
            (
                StageModel("dequant", flops=_flops_dequant, bytes=_bytes_dequant),
                StageModel("gemm", flops=_flops, bytes=_bytes_gemm, tensor_cores=True),
            ),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: one GEMM converting each int8 weight tile after its load, the scales on the accumulator",
            (StageModel("gemm_int8", flops=_flops, bytes=_bytes, tensor_cores=True),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-2,
)
