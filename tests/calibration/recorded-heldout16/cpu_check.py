"""The CPU check of the sixteenth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout16/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_matpow": [
        {"N": 100, "dtype": "float16"},  # a ragged tile (one of 128, partly masked), ragged K
        {"N": 256, "dtype": "float16"},
        {"N": 1, "dtype": "float16"},
    ],
    "calib_chunk_copies": [
        {"N": 7, "F": 300, "dtype": "float32"},  # ragged column blocks
        {"N": 16, "F": 1024, "dtype": "float16"},
        {"N": 1, "F": 1, "dtype": "float32"},
    ],
    "calib_sinkhorn_iters": [
        {"B": 5, "n": 32, "dtype": "float32"},
        {"B": 3, "n": 20, "dtype": "float32"},  # masked rows and columns (BLOCK 32)
        {"B": 2, "n": 2, "dtype": "float32"},
    ],
}
COMMANDS = ["autotune_every_step", "long_conv_direct"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
