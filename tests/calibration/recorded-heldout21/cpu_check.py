"""The CPU check of the twenty-first held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout21/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_gauss_sep": [
        {"H": 5, "W": 130, "K": 3},  # ragged: a partial column tile, 3 of a 32-centre chunk (the rest masked)
        {"H": 33, "W": 16, "K": 2},  # a partial row tile
        {"H": 32, "W": 128, "K": 40},  # whole tiles, a chunk and a partial one
    ],
    "calib_gemv_narrow": [
        {"M": 3, "K": 300},  # ragged: the last step masked in both versions
        {"M": 2, "K": 4096},  # whole steps (v1: two)
        {"M": 1, "K": 5},
    ],
}
COMMANDS = ["subclass_meta", "linalg_sync"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
