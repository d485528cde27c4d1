"""The CPU check of the fourteenth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout14/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_logaddexp": [
        {"N": 100, "M": 300, "dtype": "float32"},  # ragged query and sample tiles
        {"N": 64, "M": 128, "inv_h": 10, "dtype": "float16"},
        {"N": 1, "M": 1, "dtype": "float32"},
    ],
    "calib_tri_prefix": [
        {"R": 100, "L": 64, "dtype": "float32"},  # a ragged last tile of rows
        {"R": 70, "L": 16, "dtype": "float16"},
        {"R": 1, "L": 128, "dtype": "float32"},
    ],
    "calib_two_pass_var": [
        {"C": 3, "M": 1024, "SPLIT": 4, "dtype": "float32"},
        {"C": 2, "M": 512, "SPLIT": 2, "dtype": "float16"},
        {"C": 1, "M": 16, "SPLIT": 1, "dtype": "float32"},
    ],
}
COMMANDS = ["pad_to_max_length", "host_register_per_batch"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
