"""The CPU check of the twenty-eighth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout28/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_so3_taylor": [
        {"B": 700},  # ragged: a partial second block of 512 (zero and tiny angles among them)
        {"B": 7},  # one partial block
    ],
    "calib_stencil_assembled": [
        {"H": 37, "W": 45},  # ragged: a partial second block of 1024, every edge case of the stencil
        {"H": 3, "W": 5},  # one partial block, every point next to an edge
    ],
}
COMMANDS = ["csan_left_on", "item_renorm"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
