"""Calibration pair — contended atomics: histogram (DRAFT docstring)."""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version

NUM_BINS = 256


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randint(0, NUM_BINS, (params["n"],), generator=g, device=device, dtype=torch.int32)
    bins = torch.zeros(NUM_BINS, device=device, dtype=torch.int32)   # the 256 addresses every atomic hits
    count = torch.zeros(1, device=device, dtype=torch.int32)         # programs done (the last one resets)
    out = torch.full((NUM_BINS,), -1, device=device, dtype=torch.int32)  # poisoned until written
    return {"x": x, "bins": bins, "count": count, "out": out}


def _reference(inputs, params):
    import torch

    return torch.bincount(inputs["x"].long(), minlength=NUM_BINS).to(torch.int32)


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel(
    "histogram",
    flops=lambda p: 0.0,                                   # integer counting: no floating-point work
    bytes=lambda p: 4.0 * p["n"] + 4.0 * NUM_BINS,         # x read once, the 256 counts written once
)

KERNEL = KernelPackage(
    name="calib_histogram",
    description="Calibration (contended atomics): 256-bin histogram of n int32 values; v0 does one global "
                "atomic per value on the 256 bins, v1 counts each block with tl.histogram and adds 256 per program.",
    params=(
        Param("n", 1 << 26, min=1, max=1 << 30, doc="values, uniform in [0, 256)"),
        Param("dtype", "int32", choices=("int32",), doc="element type of the values and the counts"),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: one global atomic_add per value, all n on the 256 bin addresses",
                (_STAGE,), _build("v0")),
        Version("v1", "fix: the same kernel, grid and loads; tl.histogram per block, then one atomic per bin "
                      "per program", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: 4.0 * p["n"] + 12.0 * NUM_BINS + 4.0,
    # Counts are exact: one lost or doubled atomic is an error.
    tolerance=lambda dtype: 0.0,
)
