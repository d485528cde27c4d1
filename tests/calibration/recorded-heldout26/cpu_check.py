"""The CPU check of the twenty-sixth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout26/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_cdf_quadrature": [
        {"N": 3001},  # ragged: a partial last block, |x| up to ~5
        {"N": 5},  # one partial block
    ],
    "calib_dequant_copy": [
        {"M": 5, "K": 200, "N": 130},  # ragged: partial tiles on every axis (M < BLOCK_M, a partial K step)
        {"M": 17, "K": 256, "N": 128},  # two row tiles of M (the second partial), whole K and N tiles
    ],
}
COMMANDS = ["layer_timing_sync", "decode_no_cache"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
