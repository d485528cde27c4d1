"""The seventeenth held-back set (HELDOUT17_PAIRS): each kernel version matches its reference on the CPU
(Triton interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), run twice (a
version gives the same result again), and both variants of each command script run on the CPU (small
sizes) and agree. The sizes are the set's own CPU check (recorded-heldout17/cpu_check.py)."""

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
)

SMALL = {
    "calib_moe_dense": [
        {"T": 100, "D": 40, "F": 130, "E": 3},  # tiles straddling experts, ragged K and N
        {"T": 256, "D": 64, "F": 128, "E": 2},  # one expert a tile
        {"T": 1, "D": 1, "F": 1, "E": 1},
    ],
    "calib_jacobi_copy": [
        {"N": 37, "dtype": "float32"},
        {"N": 40, "dtype": "float16"},
        {"N": 1, "dtype": "float32"},  # boundary only
        {"N": 3, "dtype": "float32"},  # one interior point
    ],
}


def test_every_heldout17_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT17_PAIRS if not p.command} == set(SMALL)
    earlier = ALL_PAIRS + HELDOUT8_PAIRS + HELDOUT9_PAIRS + HELDOUT10_PAIRS + HELDOUT11_PAIRS
    earlier += HELDOUT12_PAIRS + HELDOUT13_PAIRS + HELDOUT14_PAIRS + HELDOUT15_PAIRS + HELDOUT16_PAIRS
    assert len(HELDOUT17_PAIRS) == 4 and not {p.name for p in HELDOUT17_PAIRS} & {p.name for p in earlier}
    for p in HELDOUT17_PAIRS:  # the command scripts exist; causes are set
        assert p.command == (p.kernel.endswith(".py")) and p.cause
        assert not p.command or (COMMANDS_DIR / p.kernel).is_file()


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    version_matches_reference(name, params, version)


@pytest.mark.parametrize("name", ["cpu_head", "multi_loss_backward"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    command_variants_agree(name)
