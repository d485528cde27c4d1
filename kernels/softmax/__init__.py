"""softmax: y[M, N] = softmax(x[M, N]) over the last dimension, computed in FP32 (Triton).

Model (one stage, "softmax"):
  * bytes = 2·M·N·itemsize — x read once, y written once: the minimum any softmax must move.
    Versions that read x more than once (v0: three times, v1: twice) show the excess as
    measured traffic above the model (unless the re-reads hit in L2).
  * FLOPs ≈ 5·M·N — per element one max, one subtract, one exp, one add (the row sum) and
    one multiply/divide by the sum. exp counts as one FLOP (it is one SFU instruction, ex2,
    after a scale by log2 e), so this is a nominal count; it only serves the roofline.
At 2 bytes/element (bf16) the intensity is ~1.25 FLOP/byte, far left of any GPU's ridge:
the roof is DRAM bandwidth, and the practical target is the bandwidth of a device-to-device
copy of the same bytes (benchmarks/bench_softmax.py measures both).

Versions (an optimisation story, each step removing a pass over x):
  v0  three passes over each row (max, sum of exp, write) in 1024-column tiles;
  v1  online softmax: running max and rescaled sum in one pass, then the write pass;
  v2  one pass: the whole row in registers, a persistent grid sized to the occupancy;
  v3  v2 with several rows per tile for short rows, streaming cache hints and an
      autotuned launch (warps, pipelining stages, programs per SM).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    dtype = getattr(torch, params["dtype"])
    M, N = params["M"], params["N"]
    x = torch.randn(M, N, generator=g, device=device, dtype=torch.float32).to(dtype)
    # Poisoned output: NaN wherever the kernel fails to write shows up in the check.
    y = torch.full((M, N), float("nan"), device=device, dtype=dtype)
    return {"x": x, "y": y}


def _reference(inputs, params):
    import torch

    x = inputs["x"]
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel(
    "softmax",
    flops=lambda p: 5.0 * p["M"] * p["N"],
    bytes=lambda p: 2.0 * p["M"] * p["N"] * p.itemsize,
    tensor_cores=False,
)

KERNEL = KernelPackage(
    name="softmax",
    description="Row-wise softmax over the last dim (Triton, FP32 math). Memory-bound: the roof is DRAM "
                "bandwidth; the minimum traffic is one read of x and one write of y.",
    params=(
        Param("M", 32768, min=1, max=1 << 20, doc="rows", cpu_default=256),
        Param("N", 4096, min=1, max=1 << 17, doc="columns (softmax is taken over each row)", cpu_default=512),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16", "float32"), cpu_default="float32"),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "three passes over each row in 1024-column tiles (max, sum of exp, write): reads x 3 times, "
                      "one program per row, 4 warps", (_STAGE,), _build("v0")),
        Version("v1", "online softmax: running max and rescaled sum in one pass, then the write pass: reads x twice",
                (_STAGE,), _build("v1")),
        Version("v2", "single pass: whole row in registers (BLOCK_N = next_pow2(N), warps from BLOCK_N), persistent "
                      "grid of SMs x occupancy programs striding over rows: reads x once (N > 32768 falls back to v1)",
                (_STAGE,), _build("v2")),
        Version("v3", "v2 plus 2-D tiles of several rows for short rows (>= 4096 elements per tile), streaming "
                      "cache hints (x evict-first, y .cs) and autotuned warps/stages/programs per SM "
                      "(key: N and rows per tile)",
                (_STAGE,), _build("v3")),
    ),
    memory_bytes=lambda p: 2.0 * p["M"] * p["N"] * p.itemsize,
)
