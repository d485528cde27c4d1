"""The CPU check of the thirteenth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout13/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_separable_filter": [
        {"H": 70, "W": 100, "K": 15, "dtype": "float32"},  # ragged tiles, borders everywhere
        {"H": 33, "W": 65, "K": 5, "dtype": "float32"},
        {"H": 1, "W": 3, "K": 7, "dtype": "float32"},  # smaller than the kernel
    ],
    "calib_kepler_bisect": [
        {"N": 5000, "dtype": "float32"},  # a ragged last tile
        {"N": 3000, "dtype": "float16"},
        {"N": 1, "dtype": "float32"},
    ],
    "calib_cas_max": [
        {"N": 5000, "S": 64, "dtype": "float32"},  # heavy collisions
        {"N": 3000, "S": 4096, "dtype": "float16"},  # empty segments stay -inf
        {"N": 1, "S": 1, "dtype": "float32"},
    ],
}
COMMANDS = ["fft_prime_length", "gc_every_step"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
