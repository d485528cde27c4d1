"""record.py with the seventeenth held-back set added to the pairs it knows (record.py itself is not this set's to
edit): the same recording, the same arguments.

    python3 tests/calibration/recorded-heldout17/record17.py --out $OUT/rec --pairs "..." ...

scripts/record_calibration_gpu.sh with tests/calibration/record.py replaced by this file runs it."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import record  # noqa: E402
from pairs import HELDOUT17_PAIRS  # noqa: E402

record.HELDOUT12_PAIRS = record.HELDOUT12_PAIRS + HELDOUT17_PAIRS

if __name__ == "__main__":
    sys.exit(record.main())
