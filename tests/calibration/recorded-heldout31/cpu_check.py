"""The CPU check of the thirty-first held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout31/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_hist_onehot": [
        {"N": 33000},  # ragged: a partial third chunk of 16384 (bins 0 and 255 among the values)
        {"N": 7},  # one partial chunk
    ],
    "calib_tridiag_dense": [
        {"B": 130},  # ragged: a partial second block of 128 systems for v1 (v0: a program a system)
        {"B": 5},  # one partial block
    ],
}
COMMANDS = ["numpy_round_trip", "epoch_perm_per_step"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
