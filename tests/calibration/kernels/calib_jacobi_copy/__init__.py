"""Calibration pair (seventeenth held-back set) — a stencil's new grid copied back after every sweep where
swapping the buffers serves: Jacobi iteration for Laplace's equation on a 2-D grid writes each sweep's
result into a second array (it must not overwrite values its neighbours still read), and the code then
copies the new grid back into the old one (``u.copy_(u_new)``, ``cudaMemcpy(u, u_new, ...)``) so that the
next sweep reads "u" again: a device-to-device copy of the whole grid per sweep, where exchanging the two
arrays' roles (swapping the pointers) gives the same iterates. Sources: NVIDIA's CUDA samples and "CUDA by
Example" (Sanders & Kandrot, 2010, ch. 7: the heat-transfer simulation swaps its input and output
buffers), NVIDIA's multi-GPU-programming-models Jacobi solvers (``std::swap(a_new, a)`` after each
iteration), and the CUDA C++ Best Practices Guide ("Minimize data transfer" / device memory bandwidth as
the limiter of memory-bound kernels).

The work: u0 [N, N] fp32 (N = 8192: 256 MB), S = 4 sweeps of the 5-point Jacobi update
u'[i, j] = (u[i-1, j] + u[i+1, j] + u[i, j-1] + u[i, j+1]) / 4 on the interior, the boundary rows and
columns kept (Dirichlet). The sweep kernel: one program per row and 1024-column block (4 warps); the
neighbours come from the rows above and below (cache hits after their first read).

Planted problem (v0): for each sweep s, stage "sweep{s}" (u → u_new; the first sweep reads u0) then stage
"copy{s}" (u_new → u, a copy kernel of the same tiling): 8 stages.
Fix (v1): stage "sweep{s}" alone, the two buffers exchanged after each sweep (u0 → A → B → A → B): 4 stages.

Model: each sweep 4 FLOPs an interior point, bytes 2·N²·itemsize (the grid read once, written once); each
copy no FLOPs, 2·N²·itemsize.

Expected on an H100 SXM (per design): each sweep and each copy ~0.17-0.2 ms (512 MB at ~2.6-3 TB/s): v0
~1.5 ms (4 GB), v1 ~0.75 ms (2 GB): ~1.8-2x. Cause "over_fetch" (the copies' traffic: bytes the result does
not need), resource "dram".
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    dt = getattr(torch, p["dtype"])
    n = p["N"]
    g = torch.Generator(device="cpu").manual_seed(0)
    u0 = torch.rand(n, n, generator=g)
    nan = float("nan")
    return {
        "u0": u0.to(device=device, dtype=dt),
        # the two working grids (poisoned: a version that fails to write its output fails the check)
        "a": torch.full((n, n), nan, device=device, dtype=dt),
        "b": torch.full((n, n), nan, device=device, dtype=dt),
    }


def _reference(inputs, p):
    u = inputs["u0"].double().clone()
    for _ in range(p["S"]):
        new = u.clone()
        new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        u = new
    return u.to(inputs["u0"].dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _grid_bytes(p):
    return 2.0 * float(p["N"]) ** 2 * p.itemsize


def _sweep(s):
    return StageModel(f"sweep{s}", flops=lambda p: 4.0 * max(p["N"] - 2, 0) ** 2, bytes=_grid_bytes)


def _copy(s):
    return StageModel(f"copy{s}", flops=lambda p: 0.0, bytes=_grid_bytes)


SWEEPS = 4  # the default S; the versions' stage lists are built for it (S is fixed: see Param below)

KERNEL = KernelPackage(
    name="calib_jacobi_copy",
    description="Calibration (held back, set 17; planted: a stencil's new grid copied back after every sweep "
    "where swapping the buffers serves): 4 Jacobi sweeps of an 8192 x 8192 fp32 grid; v0 each sweep into a "
    "second grid, then copied back; v1 the two grids exchanged after each sweep",
    params=(
        Param("N", 8192, min=1, max=1 << 16, doc="grid rows and columns"),
        Param("S", SWEEPS, min=SWEEPS, max=SWEEPS, doc="sweeps (fixed: one stage per sweep)"),
        DTYPE_PARAM("float32", choices=("float32", "float16")),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: each sweep u → u_new, then a copy kernel u_new → u (8 stages)",
            tuple(m for s in range(SWEEPS) for m in (_sweep(s), _copy(s))),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: each sweep alone, the two grids exchanged after it (4 stages)",
            tuple(_sweep(s) for s in range(SWEEPS)),
            _build("v1"),
        ),
    ),
    memory_bytes=lambda p: 1.5 * _grid_bytes(p),
    tolerance=lambda dtype: 5e-3 if dtype == "float16" else 1e-5,
)
