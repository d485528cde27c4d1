"""tests/calibration/heldout_kit: the shared scripts a held-back set is recorded with (heldout_kit/README.md)."""

import subprocess
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parent / "heldout_kit"
sys.path.insert(0, str(KIT))


def test_record_set_adds_the_named_set_to_the_held_back_pairs_record_knows():
    import pairs
    import record
    import record_set

    before = list(record.HELDOUT12_PAIRS)
    try:
        extra = record_set.add(17)
        assert extra == pairs.HELDOUT17_PAIRS and all(p in record.HELDOUT12_PAIRS for p in extra)
        assert record.HELDOUT12_PAIRS[: len(before)] == before
        record_set.add(17)  # twice: no pair twice
        assert len(record.HELDOUT12_PAIRS) == len(set(map(id, record.HELDOUT12_PAIRS)))
    finally:
        record.HELDOUT12_PAIRS = before


def test_gpu_call_is_valid_bash_and_names_the_set_s_pairs():
    assert subprocess.run(["bash", "-n", str(KIT / "gpu_call.sh")]).returncode == 0
    text = (KIT / "gpu_call.sh").read_text()
    assert "pairs.HELDOUT${set_n}_PAIRS" in text and "heldout_kit/record_set.py $set_n" in text
    assert "recorded-heldout1" not in text.replace("recorded-heldout$set_n", "")
