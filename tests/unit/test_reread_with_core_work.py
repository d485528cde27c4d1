"""Re-reads and the arithmetic done on them go together (analysis.diagnosis.catalogue.core_keeps in reread_share).

A rolling sum that sums each output's window again (the sixth held-back set's window sum, H100, recorded 2026-11-26)
re-reads every input 64 times through L1 (L1 at 98.8 % of its peak, 131x the model's bytes) and adds each of
them again (32x the model's FLOPs, 81x its integer ops in index math). Kept on chip, the data crosses L1 once; the
adds and address math of the re-read copies go with them, so the issue slots (30 % busy) do not bound the
what-if: the L2 and DRAM traffic does. Before: +234 % (T'/T held at the issue slots' 0.30) against a measured
+1,620 %; now L2's 6.4 % bounds it (+1,468 %). A stage whose FP work is the model's keeps its instruction
stream (the row kernel below the gate), and a tensor-core stage is left to the tile what-ifs."""

import dataclasses
from pathlib import Path

from conftest import recorded_metrics

from kprof_mcp.analysis.diagnosis.catalogue import core_keeps, executed_flops, integer_ops, reread_share
from kprof_mcp.analysis.diagnosis.limiter import limiter

CAL = Path(__file__).resolve().parents[1] / "calibration"
WINDOW = CAL / "recorded-heldout6" / "window_re_read_for_every_output" / "bad.result.json"
ROW = (
    CAL
    / "recorded-heldout20"
    / "a_row_kernel_launched_on_the_2_D_grid_of_the_elementwise_kernel_it_replaced__every_row_processed_by_8_programs"
    / "bad.result.json"
)


def test_the_window_sum_s_re_read_adds_go_with_its_re_reads():
    m = recorded_metrics(WINDOW)
    lim = limiter(m)
    assert lim.resource == "l1" and lim.util > 0.95
    fp, ints = executed_flops(m), integer_ops(m)
    keeps = core_keeps(m)
    # issue: FP and integer thread ops against the model's FLOPs; the FMA pipe: the FLOPs alone
    assert abs(keeps["issue"] - m.flops / (fp + ints)) < 1e-12
    assert abs(keeps["fma"] - m.flops / fp) < 1e-12 and abs(keeps["alu"] - m.flops / ints) < 1e-12
    share, level, r = reread_share(m, lim)
    assert level == "l1" and r > 100
    # L2's and DRAM's uses stay (the bytes below L1): they bound the what-if, not the issue slots.
    below = max(lim.use("dram"), lim.use("l2"))
    assert abs((1.0 - share) - below) < 1e-9
    assert lim.use("issue") > 0.25 > below  # before: T'/T was held at the issue slots' use
    # Without the op-class counters the instruction stream stays as it was (the issue slots bound it).
    bare = dataclasses.replace(m, accounting=dataclasses.replace(m.accounting, op_counts={}))
    assert core_keeps(bare) == {}
    share_bare, _, _ = reread_share(bare, limiter(bare))
    assert share_bare < share and abs((1.0 - share_bare) - lim.use("issue")) < 0.02


def test_a_stage_whose_fp_work_is_the_model_s_keeps_its_instructions():
    m = recorded_metrics(ROW)
    keeps = core_keeps(m)
    fp = executed_flops(m)
    assert "fma" not in keeps or fp > 1.25 * m.flops
    # the gate: no key is kept below the model's own work
    assert all(0.0 < k < 1.0 / 1.25 for k in keeps.values())
    # a tensor-core stage's FLOPs are the tensor pipe's: nothing here
    assert core_keeps(dataclasses.replace(m, tensor_work=True)) == {}
    assert core_keeps(dataclasses.replace(m, flops=None)) == {}


ABSMAX = (
    CAL
    / "recorded-heldout40"
    / "per_tensor_fake_quantisation_in_one_kernel_whose_every_program_rescans_the_whole_tensor_for_its_absmax__where_one_partial_maximum_per_program_and_a_second_kernel_serve"
    / "bad.result.json"
)


def test_a_latency_bound_stage_waiting_on_its_re_reads_loses_the_waits_with_them():
    """The fortieth held-back set's absmax rescanned by every program (H200, 2026-11-29): no resource bound
    (ALU 52 %), the warps waiting on memory 73 % of their time, coalesced loads (16 sectors a request), L2 19x
    the model's bytes and DRAM at 0.5x: the waits are the re-reads' round trips, so the what-if keeps L2's share
    of the time, the ALU's max over the copies going with them. First judged: occupancy (the grid's 1.9 blocks
    an SM) first at +83 % for +2,817 %; now the L2 re-read first at +1,821 %."""
    from kprof_mcp.analysis.diagnosis import opportunities

    m = recorded_metrics(ABSMAX)
    lim = limiter(m)
    assert not lim.bound and m.accounting.memory_wait > 0.5 and m.over_fetch_ratio < 1.25
    share, level, r = reread_share(m, lim)
    l2 = m.accounting.level_bytes["l2"]
    assert level == "l2" and 15 < r < 25 and r == l2 / m.bytes_model  # no atomics here
    keep = core_keeps(m)
    assert keep["alu"] < 0.1  # the max over the copies goes with them
    assert abs(share - (1 - 1 / r)) < 0.01  # the uses after the change are under L2's keep
    top = opportunities(m)[0]
    assert top.cause == "over_fetch" and top.facts.reread and 1500 < top.est_gain_pct < 2000
    # the same stage with DRAM over-fetch (its own cause) or with waits that are not memory's: not this what-if
    assert reread_share(dataclasses.replace(m, over_fetch_ratio=2.0), lim) is None
