"""record.py with one held-back set added to the pairs it knows (record.py itself is not a set's to edit): the same
recording, the same arguments, the set named by its number (``HELDOUT<N>_PAIRS`` in pairs.py).

    python3 tests/calibration/heldout_kit/record_set.py N --out $OUT/rec --pairs "..." ...

gpu_call.sh here runs it in place of record.py through scripts/record_calibration_gpu.sh."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pairs  # noqa: E402
import record  # noqa: E402


def add(n: int) -> list:
    """The set's pairs, added to the list record.py takes held-back pairs from."""
    extra = getattr(pairs, f"HELDOUT{n}_PAIRS")
    record.HELDOUT12_PAIRS = record.HELDOUT12_PAIRS + [p for p in extra if p not in record.HELDOUT12_PAIRS]
    return extra


if __name__ == "__main__":
    add(int(sys.argv.pop(1)))
    sys.exit(record.main())
