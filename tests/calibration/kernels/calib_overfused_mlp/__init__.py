"""Calibration pair (twenty-fifth held-back set) — a two-layer MLP fused into one kernel by recomputation: each
program computes one [BM, BN] tile of Y = relu(X W1) W2 and, to avoid writing the hidden activation to memory,
recomputes the whole [BM, H] hidden block relu(X W1) it needs, so every one of the D / BN column tiles of Y
recomputes the same first GEMM (over-fusion: a producer with a large reduction fused into every consumer tile).
The fix: the hidden activation computed once (one GEMM with its ReLU epilogue, stored as fp16) and a second
GEMM over it; the same values (the hidden block is rounded to fp16 in both). Sources: the Triton tutorial "Matrix
Multiplication" (tl.dot tiles), the FlashAttention papers' discussion of recomputation (recompute only what is
cheaper than the memory it saves), Ragan-Kelley et al. "Halide" (PLDI 2013: the fusion / recomputation /
storage trade-off of producer-consumer schedules).

The work: Y [M, D] fp16 = relu(X [M, D] W1 [D, H]) (fp16) W2 [H, D], fp32 accumulation.

Planted problem (v0): stage "mlp_fused": grid (M / BM) x (D / BN); each program loops over the hidden in
chunks of BH, each chunk recomputed as X[BM, :] W1[:, chunk] (D / BK K steps) before its product with
W2[chunk, BN]: the first GEMM done D / BN = 8 times over (619 GFLOP for 137 needed at the defaults).
Fix (v1): stage "up": Hd = relu(X W1) (fp16, [M, H]); stage "down": Y = Hd W2.

Model: 4 M D H FLOPs (both GEMMs once: the needed work) for both versions; bytes X, W1, W2, Y once (v1 adds the
hidden activation's write and read, 2 x 2 M H bytes, as its stages' needed traffic).

Expected on an H100/H200 (per design): v0 ~619 GFLOP on the tensor cores at ~400-500 TFLOP/s: ~1.3-1.6 ms; v1
~137 GFLOP plus 134 MB for the hidden round trip: ~0.3-0.4 ms: ~4-5x. Cause "move_work" (the needed products
done by a costlier method: the first GEMM recomputed per output tile where computing it once serves), resource
"tensor".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    m, d, h = p["M"], p["D"], p["H"]
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(m, d, generator=gen).to(torch.float16)
    w1 = (torch.randn(d, h, generator=gen) / d**0.5).to(torch.float16)
    w2 = (torch.randn(h, d, generator=gen) / h**0.5).to(torch.float16)
    return {
        "X": x.to(device),
        "W1": w1.to(device),
        "W2": w2.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((m, d), float("nan"), device=device, dtype=torch.float16),
    }


def _reference(inputs, p):
    hid = (inputs["X"].double() @ inputs["W1"].double()).relu().to(inputs["X"].dtype)
    return (hid.double() @ inputs["W2"].double()).to(inputs["X"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 4.0 * p["M"] * p["D"] * p["H"]


def _flops_one(p):
    return 2.0 * p["M"] * p["D"] * p["H"]


def _bytes_fused(p):
    return 2.0 * (2 * p["M"] * p["D"] + 2 * p["D"] * p["H"])


def _bytes_up(p):
    return 2.0 * (p["M"] * p["D"] + p["D"] * p["H"] + p["M"] * p["H"])


def _bytes_down(p):
    return 2.0 * (p["M"] * p["H"] + p["H"] * p["D"] + p["M"] * p["D"])


KERNEL = KernelPackage(
    name="calib_overfused_mlp",
    description="Calibration (held back, set 25; planted: a two-layer MLP fused by recomputing the hidden "
    "activation in every output tile): Y = relu(X [8192, 1024] W1 [1024, 4096]) W2 [4096, 1024] fp16; v0 one "
    "kernel, the first GEMM recomputed by each of the 8 column tiles of Y, v1 the hidden computed once (two GEMMs)",
    params=(
        Param("M", 8192, min=1, max=1 << 18, doc="rows of X and Y (tokens)"),
        Param("D", 1024, min=1, max=16384, doc="model width (X's and Y's columns)"),
        Param("H", 4096, min=1, max=65536, doc="hidden width"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: one fused kernel, the hidden block recomputed for every column tile of Y",
            (StageModel("mlp_fused", flops=_flops, bytes=_bytes_fused, tensor_cores=True),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the hidden activation computed once, then the second GEMM",
            (
                StageModel("up", flops=_flops_one, bytes=_bytes_up, tensor_cores=True),
                StageModel("down", flops=_flops_one, bytes=_bytes_down, tensor_cores=True),
            ),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes_fused,
    tolerance=lambda dtype: 1e-2,
)
