"""The CPU check of the seventeenth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout17/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_moe_dense": [
        {"T": 100, "D": 40, "F": 130, "E": 3},  # tiles straddling experts, ragged K and N
        {"T": 256, "D": 64, "F": 128, "E": 2},  # one expert a tile
        {"T": 1, "D": 1, "F": 1, "E": 1},
    ],
    "calib_jacobi_copy": [
        {"N": 37, "dtype": "float32"},
        {"N": 40, "dtype": "float16"},
        {"N": 1, "dtype": "float32"},  # boundary only
        {"N": 3, "dtype": "float32"},  # one interior point
    ],
}
COMMANDS = ["cpu_head", "multi_loss_backward"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
