"""The CPU check of the twenty-fourth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout24/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_lock_partials": [
        {"M": 70, "N": 100, "ROWS": 16},  # ragged: a partial last program, a partial column tile; 5 programs
        {"M": 64, "N": 128, "ROWS": 8},  # 8 programs on one lock (v0) / 8 of 64 locks (v1)
    ],
    "calib_blockdiag": [
        {"M": 130, "G": 3, "D": 40},  # ragged: partial tiles on every axis, groups narrower than a tile
        {"M": 128, "G": 2, "D": 64},  # whole K steps
    ],
}
COMMANDS = ["jit_per_call", "line_tracer"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
