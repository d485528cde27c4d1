"""The second held-back set (HELDOUT2_PAIRS): each kernel version matches its reference on the CPU
(Triton interpreter, small and ragged sizes, fp16: the interpreter miscomputes bf16), each
version's launch is the planted problem or its fix, the models are the work, and both variants of
each command script run on the CPU (small sizes) and give the same output."""

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from kprof_mcp.packages import available, load

HERE = Path(__file__).resolve().parent
KERNELS_DIR = HERE / "kernels"
COMMANDS_DIR = HERE / "commands"
F16 = {"dtype": "float16"}
SMALL = {
    "calib_wide_io": [{"rows": 3, "C": 2500}, {"rows": 5, "C": 64}, {"rows": 1, "C": 1}],
    "calib_row_programs": [{"rows": 70, "D": 64}, {"rows": 33, "D": 20}, {"rows": 1, "D": 1}],
    "calib_causal_gemm": [{"N": 300, "D": 130}, {"N": 128, "D": 16}, {"N": 5, "D": 3}],
    "calib_cast_transpose": [{"M": 70, "K": 1100}, {"M": 64, "K": 64}, {"M": 1, "K": 3}],
}


def _pkg(name):
    return load(available([KERNELS_DIR])[name])


def _run(name, params, version):
    pkg = _pkg(name)
    p = pkg.validate_params(dict(params, **F16))
    inputs = pkg.make_inputs(p, "cpu")
    plan = pkg.version(version).build(inputs, p)
    assert [s.name for s in plan.stages] == [s.name for s in pkg.version(version).stages]
    for stage in plan.stages:
        stage.fn()
    return pkg, p, inputs, plan


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    pkg, p, inputs, plan = _run(name, params, version)
    out, ref = plan.output(), pkg.reference(inputs, p)
    assert out.shape == ref.shape
    assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
    err = float((out.double() - ref.double()).norm() / ref.double().norm())
    assert err <= pkg.tolerance(p["dtype"]), err


def test_wide_io_v0_moves_float32_and_v1_the_models_dtype():
    for version, dtype in (("v0", torch.float32), ("v1", torch.float16)):
        _, _, inputs, plan = _run("calib_wide_io", {"rows": 2, "C": 100}, version)
        assert plan.output().dtype == dtype
        assert plan.stages[0].tiling["io_dtype"] == str(dtype)


def test_row_programs_launch_one_row_per_warp_then_32_rows_per_four_warps():
    (s0,), (s1,) = (_run("calib_row_programs", {"rows": 100, "D": 64}, v)[3].stages for v in ("v0", "v1"))
    assert (s0.tiling["ROWS"], s0.tiling["num_warps"], s0.grid_blocks) == (1, 1, 100)
    assert (s1.tiling["ROWS"], s1.tiling["num_warps"], s1.grid_blocks) == (32, 4, 4)


def test_causal_gemm_differs_only_in_the_loop_end_and_its_output_ignores_the_upper_triangle():
    (s0,), (s1,) = (_run("calib_causal_gemm", {"N": 256, "D": 32}, v)[3].stages for v in ("v0", "v1"))
    assert {k: v for k, v in s0.tiling.items() if k != "CAUSAL"} == {
        k: v for k, v in s1.tiling.items() if k != "CAUSAL"
    }
    assert (s0.tiling["CAUSAL"], s1.tiling["CAUSAL"]) == (False, True)
    # v1 never reads above the diagonal block: garbage there leaves its output unchanged.
    pkg, p, inputs, plan = _run("calib_causal_gemm", {"N": 256, "D": 32}, "v1")
    before = plan.output().clone()
    inputs["p"].copy_(inputs["p"] + torch.triu(torch.full_like(inputs["p"], 7.0), diagonal=128))
    inputs["y"].fill_(float("nan"))
    plan.stages[0].fn()
    assert torch.equal(plan.output(), before)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_models_are_the_work_at_the_defaults(name):
    pkg = _pkg(name)
    p = pkg.validate_params({})
    (st,) = pkg.version("v0").stages
    assert [s.stages for s in pkg.versions] == [pkg.version("v0").stages] * 2  # one model for both
    if name == "calib_wide_io":
        n = p["rows"] * p["C"]
        assert st.flops(p) == 2 * n and st.bytes(p) == 3 * n * 2
    elif name == "calib_row_programs":
        n = p["rows"] * p["D"]
        assert st.flops(p) == 3 * n and st.bytes(p) == 2 * n * 2
    elif name == "calib_causal_gemm":
        nn, d = p["N"], p["D"]
        assert st.tensor_cores and st.flops(p) == 2 * d * (nn * (nn + 1) // 2)
        assert st.bytes(p) == 2 * (nn * (nn + 1) // 2 + 2 * nn * d)
    else:
        assert st.flops(p) == p["M"] * p["K"] and st.bytes(p) == p["M"] * p["K"] * (4 + 2)


def _script(name):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(f"heldout2_{name}", COMMANDS_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["layout_roundtrip", "serial_copy"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    mod = _script(name)
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, cuda=False)
        loop(3)
        outs.append(output())
    assert torch.isfinite(outs[0]).all()
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-6)


def test_layout_roundtrip_bad_variant_really_copies_each_layer():
    """The planted copies are there: the bad variant's state is channels-first and contiguous after
    every step, the good variant's channels-last."""
    mod = _script("layout_roundtrip")
    for variant, stride_c in (("bad", 24), ("good", 1)):
        loop, output = mod.make(variant, cuda=False)
        loop(1)
        assert output().stride(1) == stride_c
