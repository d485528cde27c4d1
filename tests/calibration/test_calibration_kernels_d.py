"""Calibration pair D (heavy register spills, issue 26's "64x256 fp32 tile on one warp"): both
versions match the reference on the CPU (Triton interpreter, tiny and ragged sizes), the package
loads without torch or triton, and the versions differ only in num_warps (values per thread)."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kprof_mcp.packages import available, load

ROOT = Path(__file__).resolve().parents[2]
KERNELS_DIR = Path(__file__).resolve().parent / "kernels"
PKG = load(available([KERNELS_DIR])["calib_spill_tile"])


def _run(params, version):
    p = PKG.validate_params(params)
    inputs = PKG.make_inputs(p, "cpu")
    plan = PKG.version(version).build(inputs, p)
    for stage in plan.stages:
        stage.fn()
    return p, inputs, plan


@pytest.mark.parametrize("params", [{"M": 64, "N": 256}, {"M": 100, "N": 200}, {"M": 1, "N": 1}])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(params, version):
    p, inputs, plan = _run(params, version)
    out, ref = plan.output(), PKG.reference(inputs, p)
    assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
    assert float((out.double() - ref.double()).abs().max()) <= PKG.tolerance("float32")


def test_versions_differ_only_in_warps_and_the_model_is_one_read_one_write():
    _, _, p0 = _run({"M": 130, "N": 256}, "v0")
    _, _, p1 = _run({"M": 130, "N": 256}, "v1")
    s0, s1 = p0.stages[0], p1.stages[0]
    assert s0.kernel is s1.kernel and s0.grid_blocks == s1.grid_blocks == 3
    assert (s0.tiling["num_warps"], s1.tiling["num_warps"]) == (1, 8)
    assert (s0.tiling["values_per_thread"], s1.tiling["values_per_thread"]) == (512, 64)
    p = PKG.validate_params({})
    (st,) = PKG.version("v0").stages
    assert (p["M"], p["N"]) == (262144, 256) and st.bytes(p) == 8.0 * 262144 * 256


def test_package_imports_neither_torch_nor_triton():
    code = (
        "import sys; from pathlib import Path; from kprof_mcp.packages import load; "
        f"load(Path({str(KERNELS_DIR)!r}) / 'calib_spill_tile'); "
        "bad = [m for m in ('torch', 'triton') if m in sys.modules]; assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)
