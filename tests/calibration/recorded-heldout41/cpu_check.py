"""The CPU check of the forty-first held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and the command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout41/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_kuramoto_pairs": [
        {"N": 1000},  # ragged: a partial last block of 32 oscillators and of 128 phases
        {"N": 130},  # one partial block of 1024 in the fix
    ],
    "calib_softmax_wholerow": [
        {"R": 3, "V": 9000},  # BLOCK 16384 in v0; three chunks of 4096, the last partial, in v1
        {"R": 2, "V": 100},  # one partial block and one partial chunk
    ],
}
COMMANDS = ["candidate_scores_full_catalogue", "adamw_foreach_chain"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
