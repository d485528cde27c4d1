"""The CPU check of the thirty-second held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout32/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_softmax_jacobian": [
        {"M": 3, "N": 256},  # two 128-output tiles, two 128-column chunks a tile
        {"M": 1, "N": 128},  # one chunk
    ],
    "calib_sparse_as_dense": [
        {
            "R": 70,
            "C": 2048,
            "K": 8,
        },  # ragged: a partial ninth block of 8 rows (v0), a partial second of 64 (v1)
        {"R": 5, "C": 1024, "K": 4},  # one partial block
    ],
}
COMMANDS = ["unfold_maxpool", "caller_lookup_per_layer"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
