"""Calibration pair — a dot product written as a broadcast multiply and a sum (issue 36: designed
with the FMA pipe the limiter and the tensor cores the alternative; recorded, L1/shared memory is
the limiter, see below): C = A @ B, A [M, K] and B [K, N] row-major
fp16, C [M, N] fp16, fp32 accumulation, M = N = K = 2048 by default.

Planted problem (v0): a tiled Triton GEMM (64x64 tiles of C, K in slices of 16, 8 warps, 2
stages, grouped launch order) that accumulates each slice as the outer products spelled out: the
A and B tiles loaded as [64, 16, 1] and [1, 16, 64], converted to fp32, multiplied with
broadcasting and summed over K (``tl.sum(a * b, axis=1)``); the tensor cores idle.

Fix (v1): the same kernel, tiles, warps, stages and grid with 2-d tiles and ``tl.dot(a, b, acc)``:
fp16 MMA on the tensor cores (HGMMA on Hopper), fp32 accumulation. The CUDA C++ Best Practices
Guide's "use the hardware's matrix units" and Nsight Compute's tensor-pipe rule name it.

Model: 2·M·N·K FLOPs on the tensor cores (``tensor_cores=True``: the fp16 tensor peak is the roof
of this work); (M·K + K·N + M·N)·2 bytes (each operand read once, C written once).
Tolerance: the fp16 default (2e-3 relative L2; both versions accumulate exact fp16 products in
fp32, C rounded to fp16: ~3e-4).

Designed as FMA-pipe work (one FFMA per multiply-add, M·N·K = 8.6e9: Triton 3.9 compiles v0 so,
256 FFMA per slice per thread, no spills, checked offline with ptxas for sm_90). Recorded on an
H100 SXM with Triton 3.6 (2026-11-25, tests/calibration/recorded-model), the design did not hold:

* this form (3-d loads): Triton 3.6 puts K across threads, materialises the [64, 16, 64] product
  (255 registers, 2.1e8 local-memory requests: spills) and reduces it through shared memory:
  FFMA 8.6e9 but FADD 2.1e10, LSU 1.7e9 warp instructions, L1 97.7 % of peak, stalls MIO
  throttle 47 % / short scoreboard 36 %: v0 49.3 ms (annotation), 60.1 ms (event) against v1's
  0.20 ms. The limiter is L1/shared memory, not the FMA pipe;
* the first form, ``tl.sum(a.to(fp32)[:, :, None] * b.to(fp32)[None, :, :], axis=1)`` on 2-d
  tiles, is recognised by Triton 3.6's combine pass (sum of broadcast products -> dot): v0 then
  ran a TF32 dot (2.1e6 GMMA, 0 FFMA) at 459 µs vs v1's 181 µs (docs/evidence/model-pairs/).
"""


from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    M, N, K = params["M"], params["N"], params["K"]
    a = torch.randn(M, K, generator=g, device=device, dtype=torch.float32).half()
    b = torch.randn(K, N, generator=g, device=device, dtype=torch.float32).half()
    # Poisoned output: NaN wherever the kernel fails to write shows up in the check.
    c = torch.full((M, N), float("nan"), device=device, dtype=torch.float16)
    return {"a": a, "b": b, "c": c}


def _reference(inputs, params):
    return (inputs["a"].double() @ inputs["b"].double()).half()


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel(
    "gemm",
    flops=lambda p: 2.0 * p["M"] * p["N"] * p["K"],
    bytes=lambda p: 2.0 * (p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]),
    tensor_cores=True,
)

KERNEL = KernelPackage(
    name="calib_outer_sum",
    description="Calibration (planted: a dot as broadcast-multiply-and-sum): fp16 GEMM whose K slices are "
                "tl.sum(a[:, :, None] * b[None, :, :], axis=1) in fp32 on the FMA pipes (v0) vs tl.dot on the "
                "tensor cores (v1), same tiles",
    params=(
        Param("M", 2048, min=1, max=1 << 15, doc="rows of A and C"),
        Param("N", 2048, min=1, max=1 << 15, doc="columns of B and C"),
        Param("K", 2048, min=1, max=1 << 15, doc="inner dimension"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: each K slice accumulated as tl.sum(a[:, :, None] * b[None, :, :], axis=1) in fp32: "
                      "one FFMA per multiply-add on the FMA pipes, tensor cores idle; 64x64x16 tiles, 8 warps",
                (_STAGE,), _build("v0")),
        Version("v1", "fix: the same kernel, tiles and grid with tl.dot(a, b, acc): fp16 MMA on the tensor cores",
                (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: 2.0 * (p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]),
)
