"""The CPU check of the thirty-eighth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and the command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout38/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_sin_bigarg": [
        {"N": 1300, "K": 32},  # ragged: a partial third block of 512 timestamps
        {"N": 100, "K": 3},  # one partial block, three terms
    ],
    "calib_sphere_trace": [
        {"W": 24},  # 576 rays: a partial third block of 256, hits, misses and silhouettes
        {"W": 7},  # 49 rays, one partial block
    ],
}
COMMANDS = ["dft_matmul", "tri_solve_lu"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
