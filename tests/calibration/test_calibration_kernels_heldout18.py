"""The eighteenth held-back set (HELDOUT18_PAIRS): each kernel version matches its reference on the CPU
(Triton interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), run twice (a
version gives the same result again), and both variants of each command script run on the CPU (small
sizes) and agree. The sizes are the set's own CPU check (recorded-heldout18/cpu_check.py)."""

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
)

SMALL = {
    "calib_pairwise_dist": [
        {"M": 100, "N": 70, "D": 130},  # ragged tiles and a ragged last K block
        {"M": 128, "N": 256, "D": 64},  # whole tiles
        {"M": 1, "N": 1, "D": 1},
    ],
    "calib_softmax_argmax": [
        {"B": 5, "V": 5000},  # a ragged last chunk
        {"B": 3, "V": 2048},  # one whole chunk
        {"B": 2, "V": 1},
        {"B": 4, "V": 37},
    ],
}


def test_every_heldout18_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT18_PAIRS if not p.command} == set(SMALL)
    earlier = ALL_PAIRS + HELDOUT8_PAIRS + HELDOUT9_PAIRS + HELDOUT10_PAIRS + HELDOUT11_PAIRS
    earlier += (
        HELDOUT12_PAIRS
        + HELDOUT13_PAIRS
        + HELDOUT14_PAIRS
        + HELDOUT15_PAIRS
        + HELDOUT16_PAIRS
        + HELDOUT17_PAIRS
    )
    assert len(HELDOUT18_PAIRS) == 4 and not {p.name for p in HELDOUT18_PAIRS} & {p.name for p in earlier}
    for p in HELDOUT18_PAIRS:  # the command scripts exist; causes are set
        assert p.command == (p.kernel.endswith(".py")) and p.cause
        assert not p.command or (COMMANDS_DIR / p.kernel).is_file()


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    version_matches_reference(name, params, version)


@pytest.mark.parametrize("name", ["weight_offload", "deterministic_pool"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    command_variants_agree(name)
