"""The CPU check of the twentieth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout20/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_row_grid_dup": [
        {"M": 5, "N": 100},  # ragged: a row shorter than its power-of-two block
        {"M": 3, "N": 64},  # whole blocks
        {"M": 1, "N": 16},
    ],
    "calib_kron_dense": [
        {"n": 16, "batch": 3},  # 3 vectors: the GEMM's batch rows masked (BM = 64)
        {"n": 32, "batch": 2},
    ],
}
COMMANDS = ["dist_validate", "quad_form_diag"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
