"""Calibration pair — heavy register spills, re-created from issue 26's description ("a 64x256
fp32 tile on one warp"; its fix, 8 warps, measured +535 % there): a row softmax over 64 rows of 256
fp32 values per program.

Planted problem (v0): num_warps=1, so the 16 384 values of the tile sit on 32 threads: 512 values per
thread, twice the 255 registers a thread can have. The tile is live across two reductions (row max,
row sum of exp) and the scale, so it cannot be streamed: most of it spills to local memory, and the
spill traffic reaches DRAM.

Fix (v1): the same kernel and grid with num_warps=8: 64 values per thread, no spills.

Both read x once and write y once: the model is 8·M·N bytes (N = 256). Not fitted on: recorded
after the catalogue and its constants were fixed (a hold-out pair).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    M, N = params["M"], params["N"]
    x = torch.randn(M, N, generator=g, device=device, dtype=torch.float32)
    y = torch.full((M, N), float("nan"), device=device, dtype=torch.float32)  # unwritten -> NaN in the check
    return {"x": x, "y": y}


def _reference(inputs, params):
    import torch

    return torch.softmax(inputs["x"].double(), dim=-1).float()


def _build(version):
    def build(inputs, params):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, params)

    return build


_STAGE = StageModel(
    "softmax",
    flops=lambda p: 5.0 * p["M"] * p["N"],  # max, subtract, exp, add, divide per element
    bytes=lambda p: 8.0 * p["M"] * p["N"],  # x read once, y written once (fp32)
)

KERNEL = KernelPackage(
    name="calib_spill_tile",
    description="Calibration (heavy register spills): row softmax over a 64x256 fp32 tile per program; v0 on one "
                "warp (512 values per thread: heavy spills), v1 on 8 warps (64 per thread: none).",
    params=(
        Param("M", 262144, min=1, max=1 << 22, doc="rows (64 per program)"),
        Param("N", 256, min=1, max=256, doc="row length (the tile is 256 wide; N <= 256)"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: a 64x256 fp32 tile on one warp (num_warps=1): 512 values per thread -> heavy "
                      "spills to local memory", (_STAGE,), _build("v0")),
        Version("v1", "fix: the same kernel and grid with num_warps=8: 64 values per thread, no spills",
                (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: 8.0 * p["M"] * p["N"],
)
