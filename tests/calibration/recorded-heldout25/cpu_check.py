"""The CPU check of the twenty-fifth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes, and both command scripts' variants run on the CPU
at small sizes and compared — heldout_checks.py's checks (the ones test_calibration_kernels_heldout_sets.py runs,
with these sizes), each case reported ok or FAIL.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout25/cpu_check.py
"""

import sys
from pathlib import Path

SMALL = {
    "calib_halving_sum": [
        {"N": 70001},  # ragged: odd lengths in the halving passes, a partial last chunk (2 chunks)
        {"N": 3},  # two halving passes, one partial chunk
    ],
    "calib_overfused_mlp": [
        {"M": 130, "D": 40, "H": 72},  # ragged: partial tiles on every axis, a partial hidden chunk
        {
            "M": 128,
            "D": 256,
            "H": 128,
        },  # whole tiles, two column tiles of Y (the hidden recomputed twice in v0)
    ],
}
COMMANDS = ["memory_history", "activation_offload"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from heldout_checks import cpu_check

    sys.exit(cpu_check(SMALL, COMMANDS))
