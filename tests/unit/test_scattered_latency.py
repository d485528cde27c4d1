"""Scattered traffic the warps wait on (issue 36, 2026-11-29): where the counters measure the loads uncoalesced and
the warps' memory waits own their time, the over-fetch what-if takes the latency with the transactions — the time
follows the model's bytes streamed coalesced, T'/T = dram% / (r x 90 %) — not only the DRAM-busy part of the time
(DRAM at 58 % of its peak, under the scattered saturation: the rest of the time was the same loads' latency)."""

from pathlib import Path

import pytest
from conftest import recorded_metrics

from kprof_mcp.analysis.diagnosis import opportunities
from kprof_mcp.analysis.diagnosis.catalogue import uncoalesced
from kprof_mcp.analysis.diagnosis.parallelism import memory_waits

CAL = Path(__file__).resolve().parents[1] / "calibration"


def test_the_uncoalesced_gather_takes_its_latency_with_its_bytes():
    m = recorded_metrics(CAL / "recorded-accounting" / "random_gather" / "bad.result.json")
    assert uncoalesced(m) and memory_waits(m)  # 28.8 sectors a request, memory waits 99 % of the warps' time
    o = next(o for o in opportunities(m) if o.cause == "over_fetch")
    after = m.dram_pct / (m.over_fetch_ratio * 90.0)
    assert o.share == pytest.approx(
        1.0 - after, abs=0.01
    )  # +848 % for +814 % measured on an H100 (was +541 %)
    assert 800.0 < o.est_gain_pct < 900.0


def test_memory_waits():
    class A:
        measured = True

        def __init__(self, w):
            self.memory_wait = w

    class M:
        def __init__(self, a):
            self.accounting = a

    assert memory_waits(M(A(0.6))) and not memory_waits(M(A(0.4)))
    assert memory_waits(M(None))  # no counters: nothing says otherwise
