"""A stage whose model bytes over its measured time pass DRAM's peak by any amount is suspect: bandwidth
needs no clock, so the FLOP check's 2 % tolerance for clock readings does not apply to it. Recorded: the
second tampered held-back set's dirty_tiles in event mode (H200, 2026-11-26: it writes only the tiles whose
checksum changed), whose contract printed "DRAM at 101.3% of peak" as a memory-bound result."""

import re
from pathlib import Path

from kprof_mcp.analysis.peaks import suspect_reasons
from kprof_mcp.models import ProfileResult
from kprof_mcp.render.contract import render_contract
from kprof_mcp.render.diagnosis.words import _of_peak

FIX = (
    Path(__file__).resolve().parents[1] / "fixtures" / "tampered_heldback2_dirty_tiles_event_h200.result.json"
)


def test_model_bytes_a_little_over_the_dram_peak_are_suspect():
    r = ProfileResult.model_validate_json(FIX.read_text())
    s = r.stages[0]
    assert 1.0 < s.achieved_bytes_per_s / s.peak_bytes_per_s < 1.02  # 101.3 %: under the FLOP tolerance
    assert s.name in suspect_reasons(r)
    md = render_contract(r)
    assert "suspect" in md
    over = [
        float(v) for line in md.splitlines() if "peak" in line for v in re.findall(r"(\d+(?:\.\d+)?)%", line)
    ]
    assert all(v <= 100.0 for v in over), over


def test_a_share_of_a_peak_is_never_printed_above_100():
    assert _of_peak(99.94) == "99.9%" and _of_peak(100.0) == "100.0%"
    assert _of_peak(100.8) == "100% (reads over it)"
