"""Register spills as a what-if from the counters (analysis.diagnosis.spills): the local traffic and its
instructions removed, every resource's use recomputed, the next limiter bounding the gain.

The thirty-first held-back set's one-hot histogram (H200, 2026-11-29): issue-bound (81 % of the slots) by its
256 compares an element, 6 registers spilled, 96 % of L1's bytes local. The local share of L1's bytes taken as
the share of the time said +2,366 %: more than its integer work allows (the ALU pipe at 57 % stays). Kept in
registers, the spills' instructions leave the slots, and the gain is what they held. The outer-product GEMM
(recorded-model/, L1 at 95 %, 98 % of it local): the LSU pipe's other instructions (a reduction through shared
memory) bound the what-if, +589 % where the share said +4,900 %."""

from pathlib import Path

import pytest
from conftest import recorded_metrics

from kprof_mcp.analysis.diagnosis import opportunities
from kprof_mcp.analysis.diagnosis.limiter import limiter
from kprof_mcp.analysis.diagnosis.spills import spill_share

CAL = Path(__file__).resolve().parents[1] / "calibration"
HIST = (
    CAL
    / "recorded-heldout31"
    / "a_byte_histogram_counted_by_comparing_every_element_with_all_256_bins__a_one_hot_tile_summed__where_a_per_program_ballot_histogram__tl_histogram__serves"
    / "bad.result.json"
)
OUTER = CAL / "recorded-model" / "dot_as_multiply_and_sum" / "bad.result.json"


def test_an_issue_bound_kernel_s_spills_give_back_only_their_slots():
    m = recorded_metrics(HIST)
    a, lim = m.accounting, limiter(m)
    assert lim.resource == "issue" and lim.bound and m.local_share > 0.9
    share = spill_share(m, lim)
    keep_issue = 1.0 - a.local_requests / a.inst_executed
    after = max(u.util for u in lim.uses if u.key not in ("issue", "l1", "lsu", "l2"))
    assert share == pytest.approx(1.0 - max(1.0 - lim.util * (1.0 - keep_issue), after), abs=1e-9)
    assert share < 0.3 < m.local_share  # the old reading: the local share of L1's bytes
    spills = next(o for o in opportunities(m) if o.cause == "spills")
    assert spills.share == pytest.approx(share) and spills.est_gain_pct < 50
    top = opportunities(m)[0]
    assert top.cause == "move_work" and top.facts.resource == "alu"  # its integer work, as designed


def test_an_l1_bound_kernel_s_spills_leave_its_other_traffic():
    m = recorded_metrics(OUTER)
    lim = limiter(m)
    assert lim.resource == "l1" and m.local_share > 0.95
    share = spill_share(m, lim)
    # L1 keeps 1 - the local share; the LSU pipe's other instructions (the shared-memory reduction) bound it
    lsu_after = lim.use("lsu") * (1.0 - m.accounting.local_requests / m.accounting.pipe_inst["lsu"])
    assert 1.0 - share == pytest.approx(
        max(1.0 - lim.util * (1.0 - (1.0 - m.local_share)), lsu_after), abs=1e-6
    )
    assert 3.0 < 1.0 / (1.0 - share) < 10.0  # +589 %, not the share's +4,900 %


def test_without_the_local_requests_the_old_reading_stands():
    import dataclasses

    m = recorded_metrics(HIST)
    bare = dataclasses.replace(m, accounting=dataclasses.replace(m.accounting, local_requests=None))
    assert spill_share(bare, limiter(bare)) is None
    spills = next(o for o in opportunities(bare) if o.cause == "spills")
    assert spill_share(m, limiter(m)) < 0.3 < spills.share <= m.local_share  # the L1 share's reading, capped


SOFTMAX = (
    CAL
    / "recorded-heldout41"
    / "the_Triton_tutorial_s_whole_row_fused_softmax__BLOCK___next_power_of_2_V___16_warps__applied_to_131072_wide_rows__the_row_s_values_spilled_to_local_memory__where_an_online_softmax_over_4096_wide_chunks_serves"
    / "bad.result.json"
)


def test_spills_evicted_to_dram_leave_with_their_waits():
    """The forty-first held-back set's whole-row softmax (H200, 2026-11-29): L2-bound at 83 %, DRAM 73 % at 4.2x
    the model's bytes, 79 % of L1's bytes local, the warps waiting on memory 84 % of their time. DRAM kept its
    use, and the L2's unused time stayed: +37 % for +171 % measured. Now DRAM loses the local bytes beyond the
    model's (never below them) as L2 does, and the bound level's idle time (its requests' latency) goes with the
    local requests: T'/T = max(L2's keep, the uses after), +121 %."""
    m = recorded_metrics(SOFTMAX)
    lim = limiter(m)
    assert lim.bound and lim.resource == "l2" and m.accounting.memory_wait > 0.8 and m.over_fetch_ratio > 4
    local_bytes = m.local_share * m.l1_bytes
    keep_l2 = (m.accounting.level_bytes["l2"] - local_bytes) / m.accounting.level_bytes["l2"]
    dram = m.over_fetch_ratio * m.bytes_model
    assert dram - local_bytes < m.bytes_model  # DRAM falls to the model's bytes, not below
    share = spill_share(m, lim)
    assert share == pytest.approx(1 - keep_l2)
    top = opportunities(m)[0]
    assert top.cause == "spills" and 100 < top.est_gain_pct < 140  # +121 % for +171 % measured
