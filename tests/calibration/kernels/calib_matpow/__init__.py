"""Calibration pair (sixteenth held-back set) — a matrix power by repeated multiplication where repeated
squaring serves: the k-step transition matrix of a Markov chain (or a graph's k-hop reachability / walk
counts, a linear recurrence's k-step operator, a discretised propagator) P^k computed as written in a
loop, ``C = C @ P`` k - 1 times, where exponentiation by squaring needs about log2(k) products: for
k = 16, fifteen GEMMs where four give the same matrix. Sources: Knuth, "The Art of Computer
Programming", vol. 2, §4.6.3 (evaluation of powers: the binary method); the PyTorch documentation of
torch.linalg.matrix_power (which squares), and the Markov-chain textbooks' n-step transition
probabilities P^(n) = P^n.

The work: P [N, N] (N = 4096, bf16; fp16 allowed for the CPU interpreter), a row-stochastic matrix
(rows of positive entries summing to 1), k = 16; the output P^16 in the input dtype, fp32 accumulation
in every product. One GEMM kernel in both versions (tiled tl.dot, 128x128x64, 8 warps, 3 stages,
grouped tile order), one launch a product, its operands and output from three buffers (P and two
ping-pong buffers), one stage a launch.

Planted problem (v0): 15 stages "mul01" .. "mul15": C1 = P·P, C(j+1) = C(j)·P: 15 · 2N³ = 2.06 TFLOP
of MMAs.
Fix (v1): 4 stages "sq1" .. "sq4": P² = P·P, P⁴ = P²·P², P⁸, P¹⁶: 4 · 2N³ = 0.55 TFLOP. The same
matrix up to rounding (each product rounded to the dtype: 15 roundings in v0, 4 in v1; the
powers of a stochastic matrix stay bounded, so neither grows the error).

Model: each stage 2N³ FLOPs (tensor cores), bytes 3·N²·itemsize (two operands read, one output
written): 137 GFLOP and 100 MB a stage at the defaults (~1370 FLOP/B: compute-bound).

Expected on an H100 SXM (per design): a product ~0.22-0.3 ms at ~500-600 TFLOP/s (1024 tiles of
128x128: 7.8 waves of 132), the tensor pipe the limiter in every stage; v0 15 of them ~3.5-4.5 ms, v1 4
~0.9-1.2 ms: ~3.75x. The fix removes 11 of the 15 products from the limiting pipe (cause "move_work":
the same result by a cheaper algorithm; resource "tensor").
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

POWER = 16  # k: P^16 (15 products in v0, 4 squarings in v1)


def _inputs(p, device):
    import torch

    dt = getattr(torch, p["dtype"])
    n = p["N"]
    g = torch.Generator(device="cpu").manual_seed(0)
    a = torch.rand(n, n, generator=g, dtype=torch.float64) + 0.05
    a = a / a.sum(dim=1, keepdim=True)  # row-stochastic
    nan = float("nan")
    return {
        "p": a.to(device=device, dtype=dt),
        # two ping-pong buffers (poisoned: a version that fails to write its output fails the check)
        "b0": torch.full((n, n), nan, device=device, dtype=dt),
        "b1": torch.full((n, n), nan, device=device, dtype=dt),
    }


def _reference(inputs, p):
    import torch

    a = inputs["p"].double()
    return torch.linalg.matrix_power(a, POWER).to(inputs["p"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * float(p["N"]) ** 3


def _bytes(p):
    return 3.0 * float(p["N"]) ** 2 * p.itemsize


def _stage(name):
    return StageModel(name, flops=_flops, bytes=_bytes, tensor_cores=True)


KERNEL = KernelPackage(
    name="calib_matpow",
    description="Calibration (held back, set 16; planted: a matrix power by repeated multiplication where "
    "repeated squaring serves): P^16 of a 4096 x 4096 row-stochastic bf16 matrix; v0 fifteen products "
    "C = C·P, v1 four squarings",
    params=(
        Param("N", 4096, min=1, max=1 << 15, doc="rows and columns of P"),
        DTYPE_PARAM("bfloat16", choices=("bfloat16", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: P^16 by fifteen products C = C·P (a tiled tl.dot GEMM, 128x128x64, one launch each)",
            tuple(_stage(f"mul{j:02d}") for j in range(1, POWER)),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: P^16 by four squarings P², P⁴, P⁸, P¹⁶ (the same GEMM kernel)",
            tuple(_stage(f"sq{j}") for j in range(1, 5)),
            _build("v1"),
        ),
    ),
    memory_bytes=lambda p: 3.0 * float(p["N"]) ** 2 * p.itemsize,
    tolerance=lambda dtype: 3e-2,
)
