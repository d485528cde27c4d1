"""The CPU check of the eighteenth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout18/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_pairwise_dist": [
        {"M": 100, "N": 70, "D": 130},  # ragged tiles and a ragged last K block
        {"M": 128, "N": 256, "D": 64},  # whole tiles
        {"M": 1, "N": 1, "D": 1},
    ],
    "calib_softmax_argmax": [
        {"B": 5, "V": 5000},  # a ragged last chunk
        {"B": 3, "V": 2048},  # one whole chunk
        {"B": 2, "V": 1},
        {"B": 4, "V": 37},
    ],
}
COMMANDS = ["weight_offload", "deterministic_pool"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
