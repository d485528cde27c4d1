"""The fifteenth held-back set (HELDOUT15_PAIRS: designed, not yet recorded): each kernel version matches its reference on the CPU (Triton
interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), run twice (a version gives the
same result again), and both variants of each command script run on the CPU (small sizes) and
agree. The sizes are the set's own CPU check (recorded-heldout15/cpu_check.py)."""

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
)

SMALL = {
    "calib_syrk": [
        {"N": 300, "K": 100, "dtype": "float16"},  # ragged tiles (3 x 3 of 128, the last partial), ragged K
        {"N": 256, "K": 64, "dtype": "float16"},
        {"N": 1, "K": 1, "dtype": "float16"},
    ],
    "calib_zeroed_out": [
        {"N": 100, "M": 300, "dtype": "float32"},  # ragged row and column tiles
        {"N": 64, "M": 256, "dtype": "float16"},
        {"N": 1, "M": 1, "dtype": "float32"},
    ],
    "calib_needless_splitk": [
        {"M": 200, "N": 130, "K": 300, "SPLIT_K": 4, "dtype": "float16"},  # ragged tiles and slices
        {"M": 128, "N": 128, "K": 512, "SPLIT_K": 4, "dtype": "float16"},
        {"M": 1, "N": 1, "K": 1, "SPLIT_K": 4, "dtype": "float16"},
    ],
}


def test_every_heldout15_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT15_PAIRS if not p.command} == set(SMALL)
    earlier = ALL_PAIRS + HELDOUT8_PAIRS + HELDOUT9_PAIRS + HELDOUT10_PAIRS + HELDOUT11_PAIRS
    earlier += HELDOUT12_PAIRS + HELDOUT13_PAIRS + HELDOUT14_PAIRS
    assert len(HELDOUT15_PAIRS) == 5 and not {p.name for p in HELDOUT15_PAIRS} & {p.name for p in earlier}
    for p in HELDOUT15_PAIRS:  # the command scripts exist; causes are set
        assert p.command == (p.kernel.endswith(".py")) and p.cause
        assert not p.command or (COMMANDS_DIR / p.kernel).is_file()


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    version_matches_reference(name, params, version)


@pytest.mark.parametrize("name", ["ensemble_one_stream", "inverse_then_matmul"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    command_variants_agree(name)
