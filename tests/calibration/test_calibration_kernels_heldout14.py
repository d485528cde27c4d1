"""The fourteenth held-back set (HELDOUT14_PAIRS): each kernel version matches its reference on the CPU (Triton
interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), run twice (a version gives the
same result again), and both variants of each command script run on the CPU (small sizes) and
agree. The sizes are the set's own CPU check (recorded-heldout14/cpu_check.py)."""

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
    version_matches_reference(name, params, version)


@pytest.mark.parametrize("name", ["pad_to_max_length", "host_register_per_batch"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    command_variants_agree(name)
