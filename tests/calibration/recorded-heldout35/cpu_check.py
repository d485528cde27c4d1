"""The CPU check of the thirty-fifth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and the command script's variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout35/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_gcd_subtract": [
        {"L": 300, "NMAX": 64},  # ragged: a partial third block of 128 pairs
        {"L": 7, "NMAX": 32},  # one partial block
    ],
    "calib_dilated_holes": [
        {"T": 200, "C": 16},  # ragged: a partial second tile of 128 rows, taps past both ends
        {"T": 40, "C": 32},  # shorter than the filter's reach (64 rows)
    ],
}
COMMANDS = ["fft_plan_cache_off"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
