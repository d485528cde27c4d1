"""The CPU check of the thirty-fourth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout34/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_dct_cosine": [
        {"M": 3, "N": 128},  # two coefficient tiles, two sample chunks a tile
        {"M": 70, "N": 64},  # ragged: a partial second block of 64 frames (v1)
    ],
    "calib_trial_division": [
        {"L": 300, "NMAX": 256},  # ragged: a partial third block of 128 values
        {"L": 7, "NMAX": 64},  # one partial block
    ],
}
COMMANDS = ["clip_prompts_per_batch", "label_map_per_call"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
