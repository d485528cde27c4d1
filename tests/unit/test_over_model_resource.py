"""A command's work beyond its model is named at the unit its longest kernel's work runs on (issue 36, after the
thirty-first held-back set): the cause vocabulary's resource of a move is where the work runs now. Without
counters that is the GPU metrics samples' busiest unit while the kernel ran; the stage's FLOP/byte model says
only where the needed work would run (a per-step randperm's radix sort in an MLP's step is DRAM work, not the
tensor pipe's)."""

import sys
from pathlib import Path

import pytest

from kprof_mcp.analysis.diagnosis.parallelism import IDLE_UNIT_PCT, busiest_unit

CAL = Path(__file__).resolve().parents[1] / "calibration"
RANDPERM = (
    "recorded-heldout31/a_stateless_sampler_regenerating_the_epoch_s_random_permutation_of_the_whole_GPU_resident_"
    "dataset__torch_randperm_N__from_the_epoch_s_seed__at_every_step_to_take_one_batch__where_the_permutation_made_"
    "once_an_epoch_serves"
)


def test_the_per_step_randperm_is_named_at_the_dram_where_its_sort_runs():
    sys.path[:0] = [str(CAL), str(CAL.parent)]
    import table

    r = table.load(CAL / RANDPERM / "bad.result.json")
    over = [o for o in table.assess_facts(r).opportunities if o.opportunity.facts.move == "over_model"]
    assert len(over) == 1
    f = over[0].opportunity.facts
    assert "radix_sort" in f.kernel  # the CUB sort takes 75 % of the kernel time
    act = f.activity
    assert act["dram_read_pct"] + act["dram_write_pct"] == pytest.approx(59.7, abs=0.1)
    assert act["tensor_pct"] == 0.0
    assert f.resource == "dram"  # the stage's model (an MLP) would be tensor-bound


@pytest.mark.parametrize(
    ("activity", "unit"),
    [
        ({"dram_read_pct": 36.3, "dram_write_pct": 35.9, "issue_pct": 24.4, "tensor_pct": 1.0}, "dram"),
        ({"dram_read_pct": 2.3, "dram_write_pct": 12.0, "issue_pct": 53.0, "tensor_pct": 0.1}, "issue"),
        ({"dram_read_pct": 5.0, "dram_write_pct": 5.0, "issue_pct": 30.0, "tensor_pct": 70.0}, "tensor"),
        # every unit under the idle line (a serial chain on a few warps): no unit to name
        ({"dram_read_pct": 0.0, "dram_write_pct": 0.0, "issue_pct": 2.7, "tensor_pct": 1.0}, None),
        (None, None),
        ({}, None),
    ],
)
def test_busiest_unit(activity, unit):
    assert busiest_unit(activity) == unit


def test_the_idle_line_is_the_serial_kernels():
    assert busiest_unit({"dram_read_pct": IDLE_UNIT_PCT, "issue_pct": 0.0}) == "dram"
    assert busiest_unit({"dram_read_pct": IDLE_UNIT_PCT - 0.1, "issue_pct": 0.0}) is None
