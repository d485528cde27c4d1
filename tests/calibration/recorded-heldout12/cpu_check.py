"""The CPU check of the twelfth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout12/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_rare_branch": [
        {"N": 5000, "L": 64, "dtype": "float32"},  # a ragged last tile
        {"N": 3000, "L": 33, "dtype": "float16"},
        {"N": 1, "L": 5, "dtype": "float32"},
    ],
    "calib_chained_scan": [
        {"N": 10000, "dtype": "int32"},  # a ragged last tile
        {"N": 4096, "dtype": "int32"},
        {"N": 1, "dtype": "int32"},
    ],
    "calib_atomic_order": [
        {"NODES": 100, "EDGES": 1000, "D": 8, "dtype": "float32"},  # a ragged last program
        {"NODES": 7, "EDGES": 600, "D": 32, "dtype": "float16"},  # heavy collisions
        {"NODES": 1, "EDGES": 1, "D": 4, "dtype": "float32"},
    ],
}
COMMANDS = ["float_images", "lstm_cell_loop"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
