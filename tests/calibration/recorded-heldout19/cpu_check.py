"""The CPU check of the nineteenth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout19/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_poly_powers": [
        {"N": 1000, "D": 24},  # a ragged last block, the default degree
        {"N": 2048, "D": 5},  # whole blocks
        {"N": 1, "D": 0},  # a constant polynomial: no loop iteration
    ],
    "calib_index_crop": [
        {"R": 7, "C": 3000, "C0": 100, "W": 2500},  # ragged blocks (flat and 2-D)
        {"R": 3, "C": 64, "C0": 0, "W": 64},  # the whole width
        {"R": 1, "C": 1, "C0": 0, "W": 1},
    ],
}
COMMANDS = ["cudnn_disabled", "gil_thread"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
