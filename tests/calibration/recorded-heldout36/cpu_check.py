"""The CPU check of the thirty-sixth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and the command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout36/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_civil_date": [
        {"L": 300},  # ragged: a partial third block of 128 dates, the leap-day edges first
        {"L": 7},  # one partial block
    ],
    "calib_sph_allpairs": [
        {"GX": 20, "GY": 7},  # 140 particles: a partial fifth block of 32 and a partial second tile of 128
        {"GX": 5, "GY": 3},  # fewer particles than one block
    ],
}
COMMANDS = ["logprobs_to_host", "shared_matrix_solve"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
