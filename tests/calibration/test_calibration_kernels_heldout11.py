"""The eleventh held-back set (HELDOUT11_PAIRS): each kernel version matches its reference on the CPU (Triton
interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), run twice (a version gives the
same result again), and both variants of each command script run on the CPU (small sizes): the sparse one agrees
with the dense one; the host-random one draws from another generator (the planted switch), so its losses differ in
value, not in kind. The sizes are the set's own CPU check (recorded-heldout11/cpu_check.py)."""

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from kprof_mcp.packages import available, load

HERE = Path(__file__).resolve().parent
KERNELS_DIR = HERE / "kernels"
COMMANDS_DIR = HERE / "commands"
sys.path.insert(0, str(HERE))
from pairs import ALL_PAIRS, HELDOUT8_PAIRS, HELDOUT9_PAIRS, HELDOUT10_PAIRS, HELDOUT11_PAIRS  # noqa: E402

SMALL = {
    "calib_capacity_grid": [
        {"CAP": 1000, "LIVE": 77, "D": 16, "dtype": "float16"},  # a ragged last live tile
        {"CAP": 64, "LIVE": 64, "D": 32, "dtype": "float32"},  # all rows live
        {"CAP": 5, "LIVE": 1, "D": 8, "dtype": "float16"},
    ],
    "calib_atomic_epilogue": [
        {"M": 130, "N": 200, "K": 16, "dtype": "float16"},  # ragged tiles in both directions
        {"M": 128, "N": 128, "K": 32, "dtype": "float32"},
        {"M": 1, "N": 1, "K": 16, "dtype": "float16"},
    ],
    "calib_hash_probe": [
        {"N": 3000, "dtype": "float32"},
        {"N": 129, "dtype": "float32"},
        {"N": 1, "dtype": "float32"},
    ],
}


def _pkg(name):
    return load(available([KERNELS_DIR])[name])


def test_every_heldout11_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT11_PAIRS if not p.command} == set(SMALL)
    names = {p.name for p in HELDOUT11_PAIRS}
    assert len(HELDOUT11_PAIRS) == 5 and not names & {
        p.name for p in ALL_PAIRS + HELDOUT8_PAIRS + HELDOUT9_PAIRS + HELDOUT10_PAIRS
    }
    for p in HELDOUT11_PAIRS:  # the command scripts exist; causes are set
        assert p.command == (p.kernel.endswith(".py")) and p.cause
        assert not p.command or (COMMANDS_DIR / p.kernel).is_file()


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    pkg = _pkg(name)
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu")
    ref = pkg.reference(inputs, p)
    inputs["out"].fill_(float("nan"))  # a version must write every output
    plan = pkg.version(version).build(inputs, p)
    assert [s.name for s in plan.stages] == [s.name for s in pkg.version(version).stages]
    for _ in range(2):  # twice: the same result when run again (an atomic epilogue accumulates)
        for stage in plan.stages:
            stage.fn()
    out = plan.output()
    assert out.shape == ref.shape and out.dtype == ref.dtype
    assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
    err = float((out.double() - ref.double()).norm() / max(float(ref.double().norm()), 1e-30))
    assert err <= pkg.tolerance(p["dtype"]), err


def _script(name):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(name, COMMANDS_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["host_randn", "sparse_half_dense"])
def test_command_variants_run_on_the_cpu(name):
    mod = _script(name)
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, cuda=False)
        loop(3)
        loop(2)
        outs.append(output())
    for o in outs:
        assert torch.isfinite(o).all() and o.shape == (5,) and o.abs().max() > 0
    if name == "sparse_half_dense":  # CSR or dense: the same products
        torch.testing.assert_close(outs[0], outs[1], rtol=1e-4, atol=1e-4)
    else:  # noise from the host's generator or the device's: losses of the same size, not the same values
        assert 0.2 < float(outs[0].mean() / outs[1].mean()) < 5


def test_command_variants_differ_in_the_planted_switch():
    src = (COMMANDS_DIR / "sparse_half_dense.py").read_text()
    assert src.count('variant == "bad"') == 1 and "to_sparse_csr()" in src
    src = (COMMANDS_DIR / "host_randn.py").read_text()
    assert src.count('variant == "bad"') == 2  # the noise and the timesteps, both drawn on the host
