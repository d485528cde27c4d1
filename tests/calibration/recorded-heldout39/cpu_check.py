"""The CPU check of the thirty-ninth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and the command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout39/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_topp_scan": [
        {"R": 4, "V": 9000, "SLO": 60},  # nuclei of 1041 to 5020 entries: 1 to 3 blocks, a ragged last block
        {"R": 3, "V": 100},  # one partial block, small nuclei
    ],
    "calib_hmm_logspace": [
        {"NS": 70, "T": 20},  # ragged: a partial third block of 32 sequences
        {"NS": 32, "T": 1},  # one block, the initial step alone
    ],
}
COMMANDS = ["argsort_inverse", "groupnorm_one_group"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
