"""The sixteenth held-back set (HELDOUT16_PAIRS): each kernel version matches its reference on the CPU
(Triton interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), run twice (a
version gives the same result again), and both variants of each command script run on the CPU (small
sizes) and agree. The sizes are the set's own CPU check (recorded-heldout16/cpu_check.py)."""

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
)

SMALL = {
    "calib_matpow": [
        {"N": 100, "dtype": "float16"},  # a ragged tile (one of 128, partly masked), ragged K
        {"N": 256, "dtype": "float16"},
        {"N": 1, "dtype": "float16"},
    ],
    "calib_chunk_copies": [
        {"N": 7, "F": 300, "dtype": "float32"},  # ragged column blocks
        {"N": 16, "F": 1024, "dtype": "float16"},
        {"N": 1, "F": 1, "dtype": "float32"},
    ],
    "calib_sinkhorn_iters": [
        {"B": 5, "n": 32, "dtype": "float32"},
        {"B": 3, "n": 20, "dtype": "float32"},  # masked rows and columns (BLOCK 32)
        {"B": 2, "n": 2, "dtype": "float32"},
    ],
}


def test_every_heldout16_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT16_PAIRS if not p.command} == set(SMALL)
    earlier = ALL_PAIRS + HELDOUT8_PAIRS + HELDOUT9_PAIRS + HELDOUT10_PAIRS + HELDOUT11_PAIRS
    earlier += HELDOUT12_PAIRS + HELDOUT13_PAIRS + HELDOUT14_PAIRS + HELDOUT15_PAIRS
    assert len(HELDOUT16_PAIRS) == 5 and not {p.name for p in HELDOUT16_PAIRS} & {p.name for p in earlier}
    for p in HELDOUT16_PAIRS:  # the command scripts exist; causes are set
        assert p.command == (p.kernel.endswith(".py")) and p.cause
        assert not p.command or (COMMANDS_DIR / p.kernel).is_file()


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    version_matches_reference(name, params, version)


@pytest.mark.parametrize("name", ["autotune_every_step", "long_conv_direct"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    command_variants_agree(name)
