"""Calibration pairs A (strided transpose, random gather, too few blocks, tail effect): both versions of
each package match the reference on the CPU (Triton interpreter, tiny sizes), and each package's
planted problem is what its launch says (grid, tiles, column order, persistent flag)."""

from pathlib import Path

import pytest
import torch

from kprof_mcp.kernel import ParamError
from kprof_mcp.packages import available, load

KERNELS_DIR = Path(__file__).resolve().parent / "kernels"
NAMES = ("calib_transpose", "calib_gather", "calib_few_blocks", "calib_tail")
PKGS = {name: load(path) for name, path in available([KERNELS_DIR]).items() if name in NAMES}

CASES = [
    ("calib_transpose", {"M": 64, "N": 128}),
    ("calib_transpose", {"M": 100, "N": 72}),  # ragged 64x64 tiles
    ("calib_transpose", {"M": 37, "N": 13}),  # N not a multiple of 8: spread slots past N do nothing
    ("calib_transpose", {"M": 1, "N": 1}),
    ("calib_gather", {"B": 300, "V": 50, "D": 16}),
    ("calib_gather", {"B": 64, "V": 1000, "D": 24}),  # D not a power of two
    ("calib_gather", {"B": 2000, "V": 7, "D": 13}),  # D not a multiple of 8, ragged batch block
    ("calib_gather", {"B": 1, "V": 1, "D": 1}),
    ("calib_few_blocks", {"n": 10000, "programs": 3}),
    ("calib_few_blocks", {"n": 50000, "programs": 16}),  # chunks of 4096-element steps, ragged end
    ("calib_few_blocks", {"n": 5, "programs": 16}),  # more programs than steps: most do nothing
    ("calib_tail", {"iters": 40, "shrink": 256}),  # one unrolled trip of 32 and 8 more
    ("calib_tail", {"iters": 3, "shrink": 1024}),
]


def _run(kernel, params, version):
    pkg = PKGS[kernel]
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu")
    plan = pkg.version(version).build(inputs, p)
    assert [s.name for s in plan.stages] == [s.name for s in pkg.version(version).stages]
    for stage in plan.stages:
        stage.fn()
    return pkg, p, inputs, plan


def test_all_four_packages_load():
    assert set(PKGS) == set(NAMES)
    for pkg in PKGS.values():
        assert [v.name for v in pkg.versions] == ["v0", "v1"]
        assert pkg.describe()["params"][-1]["name"] == "dtype"


@pytest.mark.parametrize(
    "kernel,params,version",
    [
        pytest.param(k, p, v, id=f"{k}-{v}-" + ",".join(f"{a}{b}" for a, b in p.items()))
        for k, p in CASES
        for v in ("v0", "v1")
    ],
)
def test_version_matches_reference(kernel, params, version):
    pkg, p, inputs, plan = _run(kernel, params, version)
    out, ref = plan.output(), pkg.reference(inputs, p)
    assert tuple(out.shape) == tuple(ref.shape)
    out, ref = out.double(), ref.double()
    assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
    rel = float((out - ref).norm() / ref.norm()) if float(ref.norm()) > 0 else float((out - ref).abs().max())
    assert rel <= pkg.tolerance("float32"), rel


def test_tolerances_are_the_default_fp32_one():
    from kprof_mcp.kernel import default_tolerance

    for pkg in PKGS.values():
        assert pkg.tolerance("float32") == default_tolerance("float32")


def test_tail_versions_are_bitwise_identical_and_v0_is_about_1_1_waves():
    _, _, _, v0 = _run("calib_tail", {"iters": 17, "shrink": 512}, "v0")
    _, _, _, v1 = _run("calib_tail", {"iters": 17, "shrink": 512}, "v1")
    assert torch.equal(v0.output(), v1.output())
    s0, s1 = v0.stages[0], v1.stages[0]
    assert s0.grid_blocks == 132 + 13 and not s0.persistent  # 1.1 waves of one-per-SM programs
    assert s1.grid_blocks == 132 and s1.persistent  # one program per SM
    assert (s0.tiling["big_tiles"], s0.tiling["small_tiles"]) == (145, 0)
    assert (s1.tiling["big_tiles"], s1.tiling["small_tiles"]) == (132, 13 * 8)
    assert s0.tiling["num_warps"] == s1.tiling["num_warps"] == 32


def test_tail_model_follows_the_problem_size():
    pkg = PKGS["calib_tail"]
    p = pkg.validate_params({})
    st = pkg.version("v0").stages[0]
    n = 145 * 32768
    assert st.flops(p) == 2.0 * n * 4096 and st.bytes(p) == 8.0 * n and pkg.memory_bytes(p) == 8.0 * n
    with pytest.raises(ParamError, match="power of two"):
        pkg.make_inputs(pkg.validate_params({"shrink": 3}), "cpu")


def test_launches_plant_the_problem_at_the_defaults_shapes():
    # Built on tiny inputs but checked for the launch shape each version promises.
    _, _, _, fb0 = _run("calib_few_blocks", {"n": 1 << 16}, "v0")
    _, _, _, fb1 = _run("calib_few_blocks", {"n": 1 << 16}, "v1")
    assert fb0.stages[0].grid_blocks == 16 and fb1.stages[0].grid_blocks == (1 << 16) // 2048
    assert not fb0.stages[0].persistent
    _, _, _, t0 = _run("calib_transpose", {"M": 16, "N": 64}, "v0")
    assert t0.stages[0].grid_blocks == 64 and t0.stages[0].tiling["column_order"] == "c = (p % 8)*8 + p // 8"
    _, _, _, g0 = _run("calib_gather", {"B": 2048, "V": 100, "D": 128}, "v0")
    assert g0.stages[0].grid_blocks == 2 * 128


def test_models_at_the_defaults():
    t, g, f = PKGS["calib_transpose"], PKGS["calib_gather"], PKGS["calib_few_blocks"]
    st = t.version("v0").stages[0]
    assert st.bytes(t.validate_params({})) == 2 * 8192 * 8192 * 4 and st.flops(t.validate_params({})) == 0
    st = g.version("v1").stages[0]
    assert st.bytes(g.validate_params({})) == 2 * (1 << 18) * 128 * 4 + 4 * (1 << 18)
    st = f.version("v0").stages[0]
    assert st.bytes(f.validate_params({})) == 8 * (1 << 26) and st.flops(f.validate_params({})) == 2 * (
        1 << 26
    )
    # Inputs and outputs stay well under 4 GB at the defaults.
    for pkg in PKGS.values():
        assert pkg.memory_bytes(pkg.validate_params({})) < 1.5e9
