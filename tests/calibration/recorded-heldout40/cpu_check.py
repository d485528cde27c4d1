"""The CPU check of the fortieth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and the command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout40/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_absmax_rescan": [
        {"N": 50000},  # ragged: a partial last block of 8192 and a partial last scan chunk
        {"N": 3},  # one program, a tiny tensor
    ],
    "calib_merge_by_sort": [
        {"R": 5, "n": 256},  # eight half-cleaner stages
        {"R": 2, "n": 2},  # runs of one element, one stage
    ],
}
COMMANDS = ["embedding_bag_sum", "det3_lu"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
