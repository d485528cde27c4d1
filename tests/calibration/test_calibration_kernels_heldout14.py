"""The fourteenth held-back set (HELDOUT14_PAIRS): each kernel version matches its reference on the CPU (Triton
interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), run twice (a version gives the
same result again), and both variants of each command script run on the CPU (small sizes) and
agree. The sizes are the set's own CPU check (recorded-heldout14/cpu_check.py)."""

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
    HELDOUT13_PAIRS,
    HELDOUT14_PAIRS,
)

SMALL = {
    "calib_logaddexp": [
        {"N": 100, "M": 300, "dtype": "float32"},  # ragged query and sample tiles
        {"N": 64, "M": 128, "inv_h": 10, "dtype": "float16"},
        {"N": 1, "M": 1, "dtype": "float32"},
    ],
    "calib_tri_prefix": [
        {"R": 100, "L": 64, "dtype": "float32"},  # a ragged last tile of rows
        {"R": 70, "L": 16, "dtype": "float16"},
        {"R": 1, "L": 128, "dtype": "float32"},
    ],
    "calib_two_pass_var": [
        {"C": 3, "M": 1024, "SPLIT": 4, "dtype": "float32"},
        {"C": 2, "M": 512, "SPLIT": 2, "dtype": "float16"},
        {"C": 1, "M": 16, "SPLIT": 1, "dtype": "float32"},
    ],
}


def _pkg(name):
    return load(available([KERNELS_DIR])[name])


def test_every_heldout14_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT14_PAIRS if not p.command} == set(SMALL)
    earlier = ALL_PAIRS + HELDOUT8_PAIRS + HELDOUT9_PAIRS + HELDOUT10_PAIRS + HELDOUT11_PAIRS
    earlier += HELDOUT12_PAIRS + HELDOUT13_PAIRS
    assert len(HELDOUT14_PAIRS) == 5 and not {p.name for p in HELDOUT14_PAIRS} & {p.name for p in earlier}
    for p in HELDOUT14_PAIRS:  # the command scripts exist; causes are set
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
    for _ in range(2):  # twice: the same result when run again
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


@pytest.mark.parametrize("name", ["pad_to_max_length", "host_register_per_batch"])
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
