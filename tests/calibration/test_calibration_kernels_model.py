"""Issue 36's model pairs (FP64 where FP32 suffices, precise transcendentals, a dot as broadcast
multiply-and-sum, per-element integer division): each version matches the reference on the CPU
(Triton interpreter, small and ragged sizes), the packages load without torch or triton, the
versions differ only where the planted problem is, and the FLOP/byte models are the work."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kprof_mcp.packages import available, load

ROOT = Path(__file__).resolve().parents[2]
KERNELS_DIR = Path(__file__).resolve().parent / "kernels"
NAMES = ("calib_fp64", "calib_precise_math", "calib_outer_sum", "calib_int_div")
SMALL = {
    "calib_fp64": [{"n": 1000, "iters": 37}, {"n": 1, "iters": 1}],
    "calib_precise_math": [{"n": 1000, "iters": 3}, {"n": 5, "iters": 1}],
    "calib_outer_sum": [{"M": 64, "N": 64, "K": 48}, {"M": 70, "N": 33, "K": 20}],
    "calib_int_div": [
        {"d0": 2, "d1": 3, "d2": 5, "d3": 3, "d4": 2, "d5": 7},
        {"d0": 1, "d1": 7, "d2": 2, "d3": 11, "d4": 13, "d5": 9},
    ],
}


def _pkg(name):
    return load(available([KERNELS_DIR])[name])


def _run(name, params, version):
    pkg = _pkg(name)
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu")
    plan = pkg.version(version).build(inputs, p)
    for stage in plan.stages:
        stage.fn()
    return pkg, p, inputs, plan


@pytest.mark.parametrize("name, params", [(n, p) for n in NAMES for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    pkg, p, inputs, plan = _run(name, params, version)
    out, ref = plan.output(), pkg.reference(inputs, p)
    assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
    err = float((out.double() - ref.double()).norm() / ref.double().norm())
    assert err <= pkg.tolerance(p["dtype"]), err


def test_a_misplaced_element_fails_the_permute_check():
    """The permute's tolerance is tight enough to catch one swapped pair of elements."""
    pkg, p, inputs, plan = _run("calib_int_div", SMALL["calib_int_div"][0], "v0")
    out = plan.output().clone().reshape(-1)
    out[[0, 1]] = out[[1, 0]]
    ref = pkg.reference(inputs, p).reshape(-1)
    assert float((out.double() - ref.double()).norm() / ref.double().norm()) > pkg.tolerance("float16")


@pytest.mark.parametrize("name", ["calib_fp64", "calib_precise_math", "calib_outer_sum"])
def test_versions_run_one_kernel_with_the_same_tiles(name):
    """The fix changes one constexpr (the chain's precision, the math functions, dot vs sum): same
    kernel, programs, warps and stages."""
    _, _, _, p0 = _run(name, SMALL[name][0], "v0")
    _, _, _, p1 = _run(name, SMALL[name][0], "v1")
    s0, s1 = p0.stages[0], p1.stages[0]
    assert s0.kernel is s1.kernel and s0.grid_blocks == s1.grid_blocks
    for k in ("num_warps", "num_stages"):
        assert s0.tiling[k] == s1.tiling[k]


def test_models_are_the_work_at_the_defaults():
    fp64 = _pkg("calib_fp64")
    p = fp64.validate_params({})
    (st,) = fp64.version("v0").stages
    assert (p["n"], p["iters"]) == (1 << 24, 256)
    assert st.flops(p) == 2.0 * (1 << 24) * 256 and st.bytes(p) == 8.0 * (1 << 24)
    gemm = _pkg("calib_outer_sum")
    p = gemm.validate_params({})
    (st,) = gemm.version("v1").stages
    assert st.tensor_cores and st.flops(p) == 2.0 * 2048**3 and st.bytes(p) == 3 * 2048 * 2048 * 2
    perm = _pkg("calib_int_div")
    p = perm.validate_params({})
    (st,) = perm.version("v0").stages
    assert st.bytes(p) == 4.0 * 24 * 20 * 35 * 7 * 11 * 13 and st.flops(p) == 0.0


def test_the_permute_fix_divides_once_per_program_not_per_element():
    _, _, _, p0 = _run("calib_int_div", SMALL["calib_int_div"][1], "v0")
    _, _, _, p1 = _run("calib_int_div", SMALL["calib_int_div"][1], "v1")
    assert p0.stages[0].kernel.fn.__name__ == "gather6_kernel"
    assert p1.stages[0].kernel.fn.__name__ == "rows_kernel"
    assert p1.stages[0].grid_blocks == (1 * 7 * 2) * 2  # 14 rows of 11*13*9 = 1287 elements: 2 chunks each


@pytest.mark.parametrize("name", NAMES)
def test_package_imports_neither_torch_nor_triton(name):
    code = (
        "import sys; from pathlib import Path; from kprof_mcp.packages import load; "
        f"load(Path({str(KERNELS_DIR)!r}) / {name!r}); "
        "bad = [m for m in ('torch', 'triton') if m in sys.modules]; assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)
