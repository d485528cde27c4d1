"""The held-back sets with their own CPU check (the twelfth on: recorded-heldoutN/cpu_check.py, the set's
small and ragged sizes and its command scripts): each kernel version matches its reference on the CPU (Triton
interpreter, fp16/fp32: the interpreter miscomputes bf16), run twice (a version gives the same result again), and
both variants of each command script run on the CPU (small sizes) and agree. One module for every such set (each
set's checks the same, its sizes its own): a new set adds its number to SETS."""

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
COMMANDS_DIR = HERE / "commands"
sys.path.insert(0, str(HERE))
import pairs  # noqa: E402
from heldout_checks import command_variants_agree, version_matches_reference  # noqa: E402

SETS = tuple(range(12, 42))  # sets 12 to 41, each with its own cpu_check.py


def _cpu_check(n: int):
    """The set's own CPU check (recorded-heldoutN/cpu_check.py), loaded: its SMALL sizes and COMMANDS scripts."""
    spec = importlib.util.spec_from_file_location(
        f"cpu_check{n}", HERE / f"recorded-heldout{n}" / "cpu_check.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CHECKS = {n: _cpu_check(n) for n in SETS}


def _pairs(n: int) -> list:
    return getattr(pairs, f"HELDOUT{n}_PAIRS")


@pytest.mark.parametrize("n", SETS)
def test_every_kernel_of_the_set_is_tested_here(n):
    held = _pairs(n)
    assert {p.kernel for p in held if not p.command} == set(CHECKS[n].SMALL)
    earlier = pairs.ALL_PAIRS + [p for k in range(8, n) for p in _pairs(k)]
    # set 35 has three pairs by design (the device budget left); every earlier set four or more
    assert len(held) >= (3 if n == 35 else 4) and not {p.name for p in held} & {p.name for p in earlier}
    for p in held:  # the command scripts exist; causes are set
        assert p.command == (p.kernel.endswith(".py")) and p.cause
        assert not p.command or (COMMANDS_DIR / p.kernel).is_file()


@pytest.mark.parametrize(
    "name, params", [(name, p) for n in SETS for name in CHECKS[n].SMALL for p in CHECKS[n].SMALL[name]]
)
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    version_matches_reference(name, params, version)


@pytest.mark.parametrize("name", [c for n in SETS for c in CHECKS[n].COMMANDS])
def test_command_variants_run_on_the_cpu_and_agree(name):
    command_variants_agree(name)
