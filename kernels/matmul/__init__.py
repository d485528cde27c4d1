"""matmul: C[M, N] = A[M, K] @ B[K, N] with FP32 accumulation (Triton).

Model: 2·M·N·K FLOPs; (M·K + K·N + M·N)·itemsize bytes (each operand read once, C written
once). At 4096³ in bf16 that is ~1365 FLOP/byte, right of the H100 ridge (~295): the roof
is tensor-core throughput.

Versions (each a step towards cuBLAS on H100, bf16 4096³; benchmarks/bench_matmul.py
times them all against torch.matmul in one run):
  v0  one program per 128x128 tile, row-major launch order;
  v1  grouped launch order (L2 reuse), autotuned tiles, warps and stages;
  v2  persistent: grid = number of SMs, each program walks tiles in grouped order (no CTA
      launch and teardown per tile), autotuned;
  v3  v2 with TMA: device-side tensor descriptors (tl.make_tensor_descriptor, scratch from
      triton.set_allocator) load A/B tiles and store C (optionally in two halves, epilogue
      subtiling); the tile loop is flattened so the next tile's loads overlap the current
      epilogue. TMA needs 16-byte aligned bases and row strides: where a tensor has none
      (e.g. fp16 with K=90: 180-byte rows) v3 runs v2's kernel and its tiling says "fallback";
  v4  v3 with warp specialisation (tl.range(warp_specialize=True): a producer warpgroup
      issues TMA, two consumer warpgroups run wgmma). Triton 3.6 does this on Hopper with
      device-side descriptors, an unflattened tile loop (as its tutorial 09) and num_warps=4
      (compiled as 12 warps); not for float32, where v4 runs v3's kernel. Experimental:
      configs that fail to compile are ranked last (impl.WS_COMPILE_FAILURES lists them).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version, default_tolerance


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    dtype = getattr(torch, params["dtype"])
    M, N, K = params["M"], params["N"], params["K"]
    a = torch.randn(M, K, generator=g, device=device, dtype=torch.float32).to(dtype)
    b = torch.randn(K, N, generator=g, device=device, dtype=torch.float32).to(dtype)
    c = torch.full((M, N), float("nan"), device=device, dtype=dtype)
    return {"a": a, "b": b, "c": c}


def _reference(inputs, params):
    # FP32 accumulation on upcast inputs: the kernel's own contract.
    return (inputs["a"].float() @ inputs["b"].float()).to(inputs["a"].dtype)


def _tolerance(dtype):
    # A float32 tl.dot runs in TF32 on tensor cores: ~3e-4 relative error is expected.
    return 2e-3 if dtype == "float32" else default_tolerance(dtype)


def _build_v0(inputs, params):
    from .impl import build_v0

    return build_v0(inputs, params)


def _build_v1(inputs, params):
    from .impl import build_v1

    return build_v1(inputs, params)


def _build_v2(inputs, params):
    from .impl import build_v2

    return build_v2(inputs, params)


def _build_v3(inputs, params):
    from .impl import build_v3

    return build_v3(inputs, params)


def _build_v4(inputs, params):
    from .impl import build_v4

    return build_v4(inputs, params)


_STAGE = StageModel(
    "matmul",
    flops=lambda p: 2.0 * p["M"] * p["N"] * p["K"],
    bytes=lambda p: float(p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]) * p.itemsize,
    tensor_cores=True,
)

KERNEL = KernelPackage(
    name="matmul",
    description="Dense C = A @ B (Triton, FP32 accumulate). Compute-bound at large sizes: the roof is tensor-core peak.",
    params=(
        Param("M", 4096, min=1, max=65536, doc="rows of A and C", cpu_default=128),
        Param("N", 4096, min=1, max=65536, doc="columns of B and C", cpu_default=128),
        Param("K", 4096, min=1, max=65536, doc="reduction dimension", cpu_default=128),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32"), cpu_default="float32"),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "row-major launch order, fixed 128x128x64 tiles, 8 warps, 3 stages", (_STAGE,), _build_v0),
        Version("v1", "grouped (swizzled) launch order for L2 reuse, autotuned tiles/warps/stages", (_STAGE,), _build_v1),
        Version("v2", "persistent: one program per SM loops over the tiles in grouped order, autotuned",
                (_STAGE,), _build_v2),
        Version("v3", "v2 with TMA: device-side tensor descriptors load A/B and store C, flattened tile loop, "
                      "epilogue subtiling autotuned; falls back to v2's kernel when a row stride/base is not "
                      "16-byte aligned", (_STAGE,), _build_v3),
        Version("v4", "v3 with warp specialisation (a TMA producer warpgroup, two wgmma consumer warpgroups; "
                      "tile loop unflattened as Hopper needs); float32 runs v3's kernel, unaligned rows v2's",
                (_STAGE,), _build_v4),
    ),
    memory_bytes=lambda p: float(p["M"] * p["K"] + p["K"] * p["N"] + p["M"] * p["N"]) * p.itemsize,
    tolerance=_tolerance,
)
