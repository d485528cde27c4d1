"""The CPU check of the fifteenth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout15/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_syrk": [
        {"N": 300, "K": 100, "dtype": "float16"},  # ragged tiles (3 x 3 of 128, the last partial), ragged K
        {"N": 256, "K": 64, "dtype": "float16"},
        {"N": 1, "K": 1, "dtype": "float16"},
    ],
    "calib_zeroed_out": [
        {"N": 100, "M": 300, "dtype": "float32"},  # ragged row and column tiles
        {"N": 64, "M": 256, "dtype": "float16"},
        {"N": 1, "M": 1, "dtype": "float32"},
    ],
    "calib_needless_splitk": [
        {"M": 200, "N": 130, "K": 300, "SPLIT_K": 4, "dtype": "float16"},  # ragged tiles and slices
        {"M": 128, "N": 128, "K": 512, "SPLIT_K": 4, "dtype": "float16"},
        {"M": 1, "N": 1, "K": 1, "SPLIT_K": 4, "dtype": "float16"},
    ],
}
COMMANDS = ["ensemble_one_stream", "inverse_then_matmul"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
