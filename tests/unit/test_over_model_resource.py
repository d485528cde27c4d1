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


def test_issue_slots_filled_by_a_library_s_ffma_are_the_fma_pipe_s_work():
    """After the thirty-eighth held-back set (judged once before: the DFT's GEMM named at the issue slots while the
    pair's resource is the FMA pipe): where the samples show only the issue slots busy, the library kernel's name
    says whose instructions fill them (cuBLAS's ``..._ffma_...``, ``sgemm``: the FMA pipe; ``dgemm``: FP64)."""
    from kprof_mcp.analysis.diagnosis.parallelism import name_pipe, work_unit

    issue = {
        "dram_read_pct": 2.0,
        "dram_write_pct": 1.0,
        "issue_pct": 60.0,
        "warps_pct": 30.0,
        "tensor_pct": 0.0,
    }
    ffma = (
        "sm80_xmma_gemm_cf32cf32_f32f32_cf32_nn_n_tilesize64x64x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4"
    )
    assert work_unit(issue, ffma) == "fma" and work_unit(issue, "volta_dgemm_64x64_nn") == "fp64"
    assert work_unit(issue, "void at::native::vectorized_elementwise_kernel<4>") == "issue"
    dram = {**issue, "dram_read_pct": 70.0}
    assert work_unit(dram, ffma) == "dram"  # a unit other than the issue slots is not refined
    assert name_pipe(None) is None and name_pipe("ampere_sgemm_128x64_tn") == "fma"
    sys.path[:0] = [str(CAL), str(CAL.parent)]
    import table

    dft = (
        "recorded-heldout38/the_2_D_DFT_of_a_batch_of_images_computed_as_two_dense_products_with_the_complex_DFT_"
        "matrices__F_H_X_F_W_T__where_torch_fft_fft2_serves"
    )
    top = table.assess_facts(table.load(CAL / dft / "bad.result.json")).opportunities[0].opportunity
    assert top.cause == "move_work" and top.facts.move == "over_model" and top.facts.resource == "fma"
