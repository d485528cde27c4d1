"""``kprof init NAME``: a new kernel package from a template, ready to profile.

The package is one directory with ``__init__.py`` (parameters with bounds, inputs, the
reference, one version, the FLOP/byte model, each commented) and ``test_<name>.py`` (its
correctness test: every version against the reference, on the GPU or through the Triton
interpreter on the CPU). The template's kernel is a scaled add (``z = alpha * x + y``) in Triton:
replace it with yours, keep the shape.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from .kernel.api import NAME_RE

INIT = '''"""{name}: TODO one line on what the kernel computes.

Edit the four marked places: parameters, inputs, reference, and the Triton kernel with its
FLOP/byte model. Then:

    kprof profile {rel} --mode event          # correctness check + timing (CPU: Triton interpreter)
    kprof profile {rel} --mode annotation     # Nsight Compute counters (GPU)
    python -m pytest {rel}/test_{name}.py     # the correctness test alone

Add a version by writing another build function and another ``Version`` below; compare them with
``kprof compare {rel} v0 v1``.
"""

import functools

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, Plan, Stage, StageModel, Version


# 1. Parameters: each with a default and bounds (a profile refuses values outside them), and
#    optionally a ``cpu_default``: the default without a GPU (the Triton interpreter is slow).
#    ``dtype`` is special: ``params.itemsize`` is its size in bytes.
PARAMS = (
    Param("n", 1 << 22, min=1, max=1 << 30, doc="number of elements", cpu_default=1 << 16),
    DTYPE_PARAM("float32"),
)


# 2. Inputs: built once per profile, seeded (the same every time). Poison the outputs with NaN so
#    that an element the kernel forgets to write fails the check.
def make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    dtype = getattr(torch, params["dtype"])
    n = params["n"]
    x = torch.randn(n, generator=g, device=device, dtype=torch.float32).to(dtype)
    y = torch.randn(n, generator=g, device=device, dtype=torch.float32).to(dtype)
    z = torch.full((n,), float("nan"), device=device, dtype=dtype)
    return {{"x": x, "y": y, "z": z, "alpha": 2.0}}


# 3. Reference: the right answer, computed plainly (in float64 where precision matters). The
#    profile compares the plan's output with it (relative L2 error within the dtype's tolerance).
def reference(inputs, params):
    x, y = inputs["x"].double(), inputs["y"].double()
    return (inputs["alpha"] * x + y).to(inputs["x"].dtype)


# 4. The kernel and its plan. Triton is imported here, inside the build function, so that listing
#    kernels never imports it. A plan is the stages one run launches (each its own timed stage)
#    and the output to check.
@functools.cache
def _axpy_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def axpy_kernel(x_ptr, y_ptr, z_ptr, alpha, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(z_ptr + offs, alpha * x + y, mask=mask)

    return axpy_kernel


def build_v0(inputs, params):
    import triton

    axpy_kernel = _axpy_kernel()
    x, y, z, alpha = inputs["x"], inputs["y"], inputs["z"], inputs["alpha"]
    n, block = params["n"], 1024
    grid = (triton.cdiv(n, block),)

    def run():
        return axpy_kernel[grid](x, y, z, alpha, n, BLOCK=block, num_warps=4)

    return Plan(stages=[Stage("axpy", run, kernel=axpy_kernel, tiling={{"BLOCK": block, "num_warps": 4}},
                              grid_blocks=grid[0])],
                output=lambda: z)


# The FLOP/byte model of one stage: the minimum work and traffic of one run. It places the stage on
# the roofline and gives its speed-of-light time, so every estimated gain is bounded by it.
AXPY = StageModel(
    "axpy",
    flops=lambda p: 2.0 * p["n"],                   # one multiply and one add per element
    bytes=lambda p: 3.0 * p["n"] * p.itemsize,      # read x and y, write z, once each
    tensor_cores=False,
)

KERNEL = KernelPackage(
    name="{name}",
    description="TODO: what it computes (template: z = alpha * x + y in Triton)",
    params=PARAMS,
    make_inputs=make_inputs,
    reference=reference,
    versions=(
        Version("v0", "one program per 1024 elements, 4 warps", (AXPY,), build_v0),
    ),
    memory_bytes=lambda p: 3.0 * p["n"] * p.itemsize,  # device memory the inputs need (checked before launch)
)
'''

TEST = '''"""Correctness of every version of {name} against its reference: on a GPU when there is one,
else through the Triton interpreter on the CPU (small sizes)."""

import os

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before Triton compiles anything

from kprof_mcp.packages import load  # noqa: E402

PKG = load(os.path.dirname(os.path.abspath(__file__)))
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.mark.parametrize("version", [v.name for v in PKG.versions])
def test_version_matches_reference(version):
    params = PKG.validate_params({{"n": 4099}})  # not a multiple of the block: the masks are exercised
    inputs = PKG.make_inputs(params, DEVICE)
    plan = PKG.version(version).build(inputs, params)
    for stage in plan.stages:
        stage.fn()
    out, ref = plan.output().double(), PKG.reference(inputs, params).double()
    err = float((out - ref).norm() / ref.norm())
    assert err <= PKG.tolerance(params["dtype"]), f"{{version}}: relative L2 error {{err:.3g}}"
'''


def _builtin() -> Path | None:
    """The installed built-in kernels/ package, which ``kprof init`` never writes into (issue 41: run in
    the checkout, it did, and the new kernel appeared in every workspace's list)."""
    from .packages import KernelNotFound, builtin_kernels_dir

    try:
        return builtin_kernels_dir()
    except KernelNotFound:
        return None


def scaffold(workspace: Path, name: str, folder: str = "kernels") -> Path:
    """Write ``<workspace>/<folder>/<name>/`` (``__init__.py``, ``test_<name>.py``); refuse a bad
    name, a folder outside the workspace or inside the built-in kernels/ package, or an existing
    package (never overwrites)."""
    from .engine import KprofError

    if not re.fullmatch(NAME_RE, name) or keyword.iskeyword(name) or not name.isidentifier():
        raise KprofError(
            f"package name {name!r}: use a Python identifier (letters, digits, _; not a keyword)"
        )
    base = (workspace / folder).resolve()
    if base != workspace.resolve() and workspace.resolve() not in base.parents:
        raise KprofError(f"--dir {folder!r} is outside the workspace {workspace}")
    builtin = _builtin()
    if builtin is not None and (base == builtin or builtin in base.parents):
        raise KprofError(
            f"{base} is kprof-mcp's built-in kernels/ package (what is in it is listed in every workspace): "
            "make the kernel in a workspace of your own, e.g. `kprof --workspace ~/kprof-work init "
            f"{name}` (nothing was written)"
        )
    target = base / name
    if target.exists():
        raise KprofError(f"{target} already exists: pick another name (nothing was overwritten)")
    target.mkdir(parents=True)
    rel = target.relative_to(workspace.resolve()) if workspace.resolve() in target.parents else target
    (target / "__init__.py").write_text(INIT.format(name=name, rel=rel))
    (target / f"test_{name}.py").write_text(TEST.format(name=name))
    return target
