"""The CPU check of the twenty-third held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout23/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_split_proj": [
        {"M": 130, "N": 100, "K": 70},  # ragged: partial tiles on every axis, a partial K step
        {"M": 128, "N": 128, "K": 128},  # whole tiles, two K steps
    ],
    "calib_xorshift64": [
        {"N": 3000},  # ragged: a partial block
        {"N": 1024},
        {"N": 5},
    ],
}
COMMANDS = ["stat_hooks", "deepcopy_snapshot"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
