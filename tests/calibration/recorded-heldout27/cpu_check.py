"""The CPU check of the twenty-seventh held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout27/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_det_leibniz": [
        {"B": 300},  # ragged: a partial last block of 128
        {"B": 7},  # one partial block
    ],
    "calib_ln_broadcast_stats": [
        {"M": 5, "N": 2500},  # ragged: three column chunks of 1024, the last partial
        {"M": 3, "N": 100},  # one partial chunk
    ],
}
COMMANDS = ["conv_transpose_zero_insert", "logdet_eigh"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
