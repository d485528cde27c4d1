"""Calibration pair — a serialising reduction: total = sum(x) over n fp32 values.

v0 (planted problem): every element is atomically added to the one output address
(tl.atomic_add on a block of identical pointers): n atomics that the L2 serialises on one
location. Nsight Compute: very low DRAM% and SM%, latency-bound, the kernel thousands of times
slower than its bytes would take.

v1 (the fix): each program reduces its 4096 elements with tl.sum and issues one atomic.

Both zero the output first (a 4-byte memset in the stage: the profiler launches the stage many
times). Float atomics add in an arbitrary order, so the tolerance is 1e-4 relative.

Expected on an H100 (n = 2^22): v0 ≈ n atomics at roughly one per L2 clock on one address
(≈ a few ms); v1 ≈ 16 MB / 3 TB/s plus 1 K atomics ≈ 10-20 µs → gains of two orders of magnitude.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.rand(p["n"], generator=g, device=device, dtype=torch.float32)
    return {"x": x, "out": torch.full((1,), float("nan"), device=device)}


def _reference(inputs, p):
    return inputs["x"].double().sum().reshape(1).float()


def _v0(inputs, p):
    from .impl import build

    return build(inputs, p, per_element=True)


def _v1(inputs, p):
    from .impl import build

    return build(inputs, p, per_element=False)


_STAGE = StageModel("sum", flops=lambda p: float(p["n"]), bytes=lambda p: 4.0 * p["n"] + 4)

KERNEL = KernelPackage(
    name="calib_atomic",
    description="Calibration: sum with one atomic per element on one address (v0) vs one per block (v1)",
    params=(Param("n", 1 << 22, min=16, max=1 << 28, doc="elements"),
            DTYPE_PARAM("float32", choices=("float32",))),
    make_inputs=_inputs, reference=_reference,
    versions=(Version("v0", "tl.atomic_add of every element into out[0]", (_STAGE,), _v0),
              Version("v1", "tl.sum per 4096-element block, one atomic per block", (_STAGE,), _v1)),
    memory_bytes=lambda p: 4.0 * p["n"] + 4,
    tolerance=lambda dtype: 1e-4,
)
