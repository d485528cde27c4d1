"""Calibration pair (third held-back set) — divergence: items whose step counts differ share a
program, which loops until its slowest item is done (Nsight Compute's source counters and warp state:
thread divergence, "Branch Efficiency", threads predicated off; CUDA C++ Best Practices Guide,
"Branching and Divergence": make the controlling condition uniform per warp, e.g. by regrouping the
work).

The work: n = 2^21 independent items (particles, samples of an implicit layer, Monte-Carlo paths),
each advanced by its own number of steps s_i of the map z <- x_i + 0.5·2^(-z²) + 0.25/sqrt(1 + z²)
from z = 0 (a contraction: the results are well conditioned). The step counts are data: 2^k with
k uniform in 3..9 (8 to 512 steps, mean 145); fp32 (the only dtype). Each step costs two
multi-function-unit operations (MUFU.EX2, MUFU.RSQ on the XU pipe, a quarter of the FMA pipe's
rate) and ~5 other instructions (SASS, Triton 3.9, sm_90, read without a GPU).

Planted problem (v0): one program per 1024 items in their given order (8 per thread at 4 warps),
looping to the largest step count among them (tl.max) with each update kept only while the item
has steps left (tl.where: the lanes run every step anyway). With the counts mixed, nearly every
program holds a 512-step item: every lane runs 512 steps for an average need of 145.
Fix (v1): the same kernel on the items sorted by step count (the permutation made once with the
data, as a bucketing sampler or a MoE token sort does; not in the timed stage): each program's
items need nearly the same number of steps, so it loops about as long as they need. The results
are written in sorted order and mapped back (not timed).

Model: the steps the items need: FLOPs 8 per step (z², 1 + z², ex2, rsqrt, two FMAs of 2), at the
mean step count 145.1: 8·145.1·n ≈ 2.4 GFLOP at the defaults, bytes 12·n (x and s read, z written once: 25 MB); far
compute-bound.

Expected on an H100 SXM (per design): XU-bound; 2·Σ s_i = 0.61 G MUFU ops in v1 (~165 µs at 16 per
clock per SM) against 2·512·n = 2.15 G in v0 (~580 µs): ≈ 3.5x. v0's limiter is the XU pipe (resource
"xu") doing work for lanes that have finished; the fix removes that work (move_work).
Tolerance: fp32 with approximate ex2/rsqrt against a float64 reference: 1e-5 relative.
Measured (H100 SXM, torch 2.11, Triton 3.6, 2026-11-26): quick check (do_bench median, L2 flushed) v0 580 µs,
v1 213 µs (2.7x); recorded event medians v0 873 µs, v1 316 µs (+177 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

MIN_LOG2, MAX_LOG2 = 3, 9  # step counts 8 .. 512


def _steps(p, device):
    """The step counts: fixed by the data set, the same under any seed (the fresh-values check copies
    new x values into the same tensors; the sorted copies must stay consistent)."""
    import torch

    g = torch.Generator(device="cpu").manual_seed(1234)
    k = torch.randint(MIN_LOG2, MAX_LOG2 + 1, (p["n"],), generator=g)
    return (2**k).to(torch.int32).to(device)


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    n = p["n"]
    x = torch.rand(n, generator=g, device=device, dtype=torch.float32) * 2.0 - 1.0
    steps = _steps(p, device)
    perm = torch.sort(steps, stable=True).indices
    nan = float("nan")
    return {
        "x": x,
        "steps": steps,
        "z": torch.full((n,), nan, device=device),
        "x_sorted": x[perm].contiguous(),
        "steps_sorted": steps[perm].contiguous(),
        "perm": perm,
        "z_sorted": torch.full((n,), nan, device=device),
    }


def _reference(inputs, p):
    import torch

    x, steps = inputs["x"].double(), inputs["steps"]
    z = torch.zeros_like(x)
    for t in range(int(steps.max())):
        zz = z * z
        nz = x + 0.5 * torch.exp2(-zz) + 0.25 * torch.rsqrt(1.0 + zz)
        z = torch.where(t < steps, nz, z)
    return z.float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _mean_steps():
    return sum(2**k for k in range(MIN_LOG2, MAX_LOG2 + 1)) / (MAX_LOG2 - MIN_LOG2 + 1)


_STAGE = StageModel("steps", flops=lambda p: 8.0 * p["n"] * _mean_steps(), bytes=lambda p: 12.0 * p["n"])

KERNEL = KernelPackage(
    name="calib_divergent_steps",
    description="Calibration (held back, set 3; planted: divergence, programs loop to their slowest item): n items "
    "each advanced by its own step count (8..512) of an XU-heavy map; v0 the items in their given order, v1 sorted "
    "by step count",
    params=(
        Param("n", 1 << 21, min=1, max=1 << 26, doc="items"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: 1024 items per program in their given order, looping to the largest step count among them",
            (_STAGE,),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the same kernel on the items sorted by step count (permutation made with the data)",
            (_STAGE,),
            _build("v1"),
        ),
    ),
    memory_bytes=lambda p: 12.0 * p["n"],
    tolerance=lambda dtype: 1e-5,
)
