"""The twentieth held-back set (HELDOUT20_PAIRS): each kernel version matches its reference on the CPU
(Triton interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), run twice (a
version gives the same result again), and both variants of each command script run on the CPU (small
sizes) and agree. The sizes are the set's own CPU check (recorded-heldout20/cpu_check.py)."""

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
KERNELS_DIR = HERE / "kernels"
COMMANDS_DIR = HERE / "commands"
sys.path.insert(0, str(HERE))
from heldout_checks import command_variants_agree, version_matches_reference  # noqa: E402
from pairs import (  # noqa: E402
    ALL_PAIRS,
    HELDOUT8_PAIRS,
    HELDOUT9_PAIRS,
    HELDOUT10_PAIRS,
    HELDOUT11_PAIRS,
    HELDOUT12_PAIRS,
    HELDOUT13_PAIRS,
    HELDOUT14_PAIRS,
    HELDOUT15_PAIRS,
    HELDOUT16_PAIRS,
    HELDOUT17_PAIRS,
    HELDOUT18_PAIRS,
    HELDOUT19_PAIRS,
    HELDOUT20_PAIRS,
)

# The set's own CPU check's sizes and scripts (recorded-heldout20/cpu_check.py), loaded from it.
_spec = importlib.util.spec_from_file_location("cpu_check20", HERE / "recorded-heldout20" / "cpu_check.py")
_cpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cpu)
SMALL, COMMANDS = _cpu.SMALL, _cpu.COMMANDS


def test_every_heldout20_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT20_PAIRS if not p.command} == set(SMALL)
    earlier = ALL_PAIRS + HELDOUT8_PAIRS + HELDOUT9_PAIRS + HELDOUT10_PAIRS + HELDOUT11_PAIRS
    earlier += (
        HELDOUT12_PAIRS
        + HELDOUT13_PAIRS
        + HELDOUT14_PAIRS
        + HELDOUT15_PAIRS
        + HELDOUT16_PAIRS
        + HELDOUT17_PAIRS
        + HELDOUT18_PAIRS
        + HELDOUT19_PAIRS
    )
    assert len(HELDOUT20_PAIRS) == 4 and not {p.name for p in HELDOUT20_PAIRS} & {p.name for p in earlier}
    for p in HELDOUT20_PAIRS:  # the command scripts exist; causes are set
        assert p.command == (p.kernel.endswith(".py")) and p.cause
        assert not p.command or (COMMANDS_DIR / p.kernel).is_file()


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    version_matches_reference(name, params, version)


@pytest.mark.parametrize("name", COMMANDS)
def test_command_variants_run_on_the_cpu_and_agree(name):
    command_variants_agree(name)
