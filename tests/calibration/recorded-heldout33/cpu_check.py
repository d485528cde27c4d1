"""The CPU check of the thirty-third held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout33/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_lagrange_interp": [
        {"P": 1500, "NODES": 32},  # ragged: a partial second block of 1024 points
        {"P": 7, "NODES": 5},  # one partial block, few nodes
    ],
    "calib_rank_count": [
        {"M": 3, "N": 64},  # ties in every row (every seventh column equals the first)
        {"M": 2, "N": 16},
    ],
}
COMMANDS = ["label_smoothing_onehot", "grad_norm_concat"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
