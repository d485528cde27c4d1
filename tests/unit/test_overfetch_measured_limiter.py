"""DRAM over-fetch where the counters measured the limiter, whatever the bound's class (after the thirty-ninth
held-back set, judged once before this change: an L2 re-read first at +51 % for a measured +1,787 %). The top-p
scan reads every block of each sorted row where the model's bytes are the blocks up to the cutoff: DRAM moved
49x those bytes at 66 % of its peak, the issue slots 65 % busy, so SPEC's classification says compute-bound and
the over-fetch what-if was not asked. With counters the limiter decides (the L2 here) and the what-if bounds
itself by the SMs' work that stays (core_keeps: the arithmetic on the surplus data goes with it)."""

from pathlib import Path

from conftest import recorded_metrics

from kprof_mcp.analysis.diagnosis import classify, opportunities
from kprof_mcp.analysis.diagnosis.catalogue import dram_busy
from kprof_mcp.analysis.diagnosis.limiter import limiter
from kprof_mcp.analysis.diagnosis.metrics import COMPUTE_BOUND, Metrics

CAL = Path(__file__).resolve().parents[1] / "calibration"
TOPP = (
    CAL
    / "recorded-heldout39"
    / "a_top_p__nucleus__cutoff_computed_by_scanning_every_block_of_each_sorted_row_of_probabilities_where_stopping_a"
    "t_the_first_block_past_p_serves" / "bad.result.json"
)


def test_a_compute_classified_stage_with_measured_over_fetch_is_told_it():
    m = recorded_metrics(TOPP)
    assert classify(m) == COMPUTE_BOUND and m.over_fetch_ratio > 40
    lim = limiter(m)
    assert lim.source == "counters" and lim.resource == "l2"
    top = opportunities(m)[0]
    assert top.cause == "over_fetch" and top.facts.resource == "dram"
    assert top.facts.over_fetch_ratio == m.over_fetch_ratio and 0.5 < top.share < 1.0


def test_without_counters_a_compute_bound_stage_keeps_the_old_gate():
    m = recorded_metrics(TOPP)
    bare = Metrics(**{**m.__dict__, "accounting": None})
    assert classify(bare) == COMPUTE_BOUND
    assert not any(o.cause == "over_fetch" and o.facts.resource == "dram" for o in opportunities(bare))


def test_where_the_dram_is_not_busy_its_bytes_cost_no_time():
    """The same counters with the DRAM under its scattered-sector saturation (a tensor-core GEMM's tiles re-read
    at 24 % while its math runs: matmul v0's golden contract keeps its compute advice): no over-fetch what-if."""
    m = recorded_metrics(TOPP)
    assert dram_busy(m, limiter(m))
    quiet = Metrics(**{**m.__dict__, "dram_pct": 0.5 * m.scattered_dram_pct})
    assert classify(quiet) == COMPUTE_BOUND and not dram_busy(quiet, limiter(quiet))
    assert not any(o.cause == "over_fetch" and o.facts.resource == "dram" for o in opportunities(quiet))
