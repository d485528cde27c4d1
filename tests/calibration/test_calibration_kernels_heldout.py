"""The held-back set's kernels (an IEEE division per step, precise powf): each version matches the
reference on the CPU (Triton interpreter, small and ragged sizes) and the FLOP/byte models are the work.
The interpreter cannot call libdevice, so pow runs as exp2(e·log2 x) there in both versions (the GPU's
correctness run checked powf and fast_powf)."""

from pathlib import Path

import pytest
import torch

from kprof_mcp.packages import available, load

KERNELS_DIR = Path(__file__).resolve().parent / "kernels"
SMALL = {
    "calib_fdiv": [{"n": 1000, "iters": 7}, {"n": 5, "iters": 1}],
    "calib_pow": [{"n": 1000, "iters": 5}, {"n": 3, "iters": 1}],
}


def _pkg(name):
    return load(available([KERNELS_DIR])[name])


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    pkg = _pkg(name)
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu")
    plan = pkg.version(version).build(inputs, p)
    for stage in plan.stages:
        stage.fn()
    out, ref = plan.output(), pkg.reference(inputs, p)
    assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
    err = float((out.double() - ref.double()).norm() / ref.double().norm())
    assert err <= pkg.tolerance(p["dtype"]), err


@pytest.mark.parametrize("name", sorted(SMALL))
def test_models_are_the_work_at_the_defaults(name):
    pkg = _pkg(name)
    p = pkg.validate_params({})
    (st,) = pkg.version("v0").stages
    assert st.flops(p) == 2.0 * p["n"] * p["iters"] and st.bytes(p) == 8.0 * p["n"]
