"""The thirteenth held-back set (HELDOUT13_PAIRS): each kernel version matches its reference on the CPU (Triton
interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), run twice (a version gives the
same result again: the atomic versions must reset their output), outputs that are -inf in the reference (empty
segments) -inf in the version too, and both variants of each command script run on the CPU (small sizes) and
agree. The sizes are the set's own CPU check (recorded-heldout13/cpu_check.py)."""

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
)

SMALL = {
    "calib_separable_filter": [
        {"H": 70, "W": 100, "K": 15, "dtype": "float32"},  # ragged tiles, borders everywhere
        {"H": 33, "W": 65, "K": 5, "dtype": "float32"},
        {"H": 1, "W": 3, "K": 7, "dtype": "float32"},  # smaller than the kernel
    ],
    "calib_kepler_bisect": [
        {"N": 5000, "dtype": "float32"},  # a ragged last tile
        {"N": 3000, "dtype": "float16"},
        {"N": 1, "dtype": "float32"},
    ],
    "calib_cas_max": [
        {"N": 5000, "S": 64, "dtype": "float32"},  # heavy collisions
        {"N": 3000, "S": 4096, "dtype": "float16"},  # empty segments stay -inf
        {"N": 1, "S": 1, "dtype": "float32"},
    ],
}


def test_every_heldout13_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT13_PAIRS if not p.command} == set(SMALL)
    earlier = (
        ALL_PAIRS + HELDOUT8_PAIRS + HELDOUT9_PAIRS + HELDOUT10_PAIRS + HELDOUT11_PAIRS + HELDOUT12_PAIRS
    )
    assert len(HELDOUT13_PAIRS) == 5 and not {p.name for p in HELDOUT13_PAIRS} & {p.name for p in earlier}
    for p in HELDOUT13_PAIRS:  # the command scripts exist; causes are set
        assert p.command == (p.kernel.endswith(".py")) and p.cause
        assert not p.command or (COMMANDS_DIR / p.kernel).is_file()


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    version_matches_reference(name, params, version)


@pytest.mark.parametrize("name", ["fft_prime_length", "gc_every_step"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    command_variants_agree(name)
