"""The twelfth held-back set (HELDOUT12_PAIRS): each kernel version matches its reference on the CPU (Triton
interpreter, small and ragged sizes, fp16/fp32/int32: the interpreter miscomputes bf16), run twice (a version
gives the same result again: the atomic versions must not accumulate), and both variants of each command script
run on the CPU (small sizes) and agree. The sizes are the set's own CPU check (recorded-heldout12/cpu_check.py)."""

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
    version_matches_reference(name, params, version)


@pytest.mark.parametrize("name", ["float_images", "lstm_cell_loop"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    command_variants_agree(name)
