"""The twelfth held-back set (HELDOUT12_PAIRS): each kernel version matches its reference on the CPU (Triton
interpreter, small and ragged sizes, fp16/fp32/int32: the interpreter miscomputes bf16), run twice (a version
gives the same result again: the atomic versions must not accumulate), and both variants of each command script
run on the CPU (small sizes) and agree. The sizes are the set's own CPU check (recorded-heldout12/cpu_check.py)."""

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
from pairs import (  # noqa: E402
    ALL_PAIRS,
    HELDOUT8_PAIRS,
    HELDOUT9_PAIRS,
    HELDOUT10_PAIRS,
    HELDOUT11_PAIRS,
    HELDOUT12_PAIRS,
)

SMALL = {
    "calib_rare_branch": [
        {"N": 5000, "L": 64, "dtype": "float32"},  # a ragged last tile
        {"N": 3000, "L": 33, "dtype": "float16"},
        {"N": 1, "L": 5, "dtype": "float32"},
    ],
    "calib_chained_scan": [
        {"N": 10000, "dtype": "int32"},  # a ragged last tile
        {"N": 4096, "dtype": "int32"},
        {"N": 1, "dtype": "int32"},
    ],
    "calib_atomic_order": [
        {"NODES": 100, "EDGES": 1000, "D": 8, "dtype": "float32"},  # a ragged last program
        {"NODES": 7, "EDGES": 600, "D": 32, "dtype": "float16"},  # heavy collisions
        {"NODES": 1, "EDGES": 1, "D": 4, "dtype": "float32"},
    ],
}


def _pkg(name):
    return load(available([KERNELS_DIR])[name])


def test_every_heldout12_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT12_PAIRS if not p.command} == set(SMALL)
    names = {p.name for p in HELDOUT12_PAIRS}
    assert len(HELDOUT12_PAIRS) == 5 and not names & {
        p.name for p in ALL_PAIRS + HELDOUT8_PAIRS + HELDOUT9_PAIRS + HELDOUT10_PAIRS + HELDOUT11_PAIRS
    }
    for p in HELDOUT12_PAIRS:  # the command scripts exist; causes are set
        assert p.command == (p.kernel.endswith(".py")) and p.cause
        assert not p.command or (COMMANDS_DIR / p.kernel).is_file()


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    pkg = _pkg(name)
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu")
    ref = pkg.reference(inputs, p)
    inputs["out"].fill_(-1 if p["dtype"] == "int32" else float("nan"))  # a version must write every output
    plan = pkg.version(version).build(inputs, p)
    assert [s.name for s in plan.stages] == [s.name for s in pkg.version(version).stages]
    for _ in range(2):  # twice: the same result when run again (an atomic version must not accumulate)
        for stage in plan.stages:
            stage.fn()
    out = plan.output()
    assert out.shape == ref.shape and out.dtype == ref.dtype
    assert torch.isfinite(out.double()).all(), "unwritten (NaN-poisoned) outputs remain"
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


@pytest.mark.parametrize("name", ["float_images", "lstm_cell_loop"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    mod = _script(name)
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, False)
        loop(3)
        outs.append(output())
    for o in outs:
        assert torch.isfinite(o).all() and o.abs().max() > 0
    diff = float((outs[0] - outs[1]).abs().max())
    assert diff <= 1e-4 * max(float(outs[1].abs().max()), 1.0), diff
