"""The CPU check of the thirtieth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout30/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_morton_bitloop": [
        {"N": 2100},  # ragged: a partial third block of 1024 (zeros and the largest fp16 below 1 among them)
        {"N": 7},  # one partial block
    ],
    "calib_kan_bspline": [
        {"N": 1100},  # ragged: a partial third block of 512 (the first knot and the domain's end among them)
        {"N": 7},  # one partial block
    ],
}
COMMANDS = ["cumsum_long_rows", "real_fft_as_complex"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
