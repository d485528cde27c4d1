"""The CPU check of the thirty-seventh held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and the command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout37/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_winding_angles": [
        {"N": 1300, "E": 64},  # ragged: a partial third block of 512 points, winding numbers 0, 1 and 2
        {"N": 100, "E": 5},  # one partial block, a pentagon-sized polygon
    ],
    "calib_linattn_chunks": [
        {"BH": 2, "L": 200, "D": 16},  # ragged: a partial last chunk of 64 rows and a partial query block
        {"BH": 1, "L": 64, "D": 32},  # one chunk, two V slices
    ],
}
COMMANDS = ["broadcast_matmul", "jacrev_tall"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
