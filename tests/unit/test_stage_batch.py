"""Consecutive stages launching one kernel on grids under the SM count (analysis.diagnosis.stage_batch): the
twenty-third held-back set's Q, K and V projections (H100, recorded 2026-11-28: three launches of one matmul
kernel, 32 programs each on 132 SMs, 48.4 µs each). Each stage's own few-blocks what-if said +37.9 % for the plan;
the fix (one launch of 96 programs over the concatenated weights) measured +185.6 %. As one launch at full fill,
the run takes its longest stage (Σ T·f is less), +199.9 %."""

from pathlib import Path

import pytest

from kprof_mcp.analysis.assessment import assess
from kprof_mcp.analysis.diagnosis import batch_across_stages
from kprof_mcp.models import ProfileResult
from kprof_mcp.render.diagnosis import words

PAIR = (
    Path(__file__).resolve().parents[1]
    / "calibration/recorded-heldout23"
    / "three_projections_of_one_input_launched_as_three_small_matrix_products_where_one_over_the_concatenated_weights_serves"
)


def _load(role: str) -> ProfileResult:
    return ProfileResult.model_validate_json((PAIR / f"{role}.result.json").read_text())


def test_three_small_launches_of_one_kernel_are_batched_into_one():
    r = _load("bad")
    a = assess(r)
    o = batch_across_stages(r, a.stages)
    times = [s.timing.median_ns for s in r.stages]
    assert o is not None and o.cause == "few_blocks" and o.facts.move == "batch_stages"
    assert o.facts.focus == ("proj_q", "proj_k", "proj_v") and o.facts.grid_blocks == 32
    work = sum(t * 32 / 132 for t in times)
    assert work < max(times) == pytest.approx(o.facts.value)  # never under the longest stage
    assert o.share == pytest.approx(1 - max(times) / sum(times))
    assert 150 < o.est_gain_pct < 250  # measured +185.6 %
    top = a.opportunities[0]
    assert top.cause == "few_blocks" and top.opportunity.facts.move == "batch_stages"
    name, trigger, _ = words(top.opportunity)
    assert (
        name.startswith("Launch the 3 stages' matmul_kernel as one launch")
        and "32 blocks (< 132 SMs)" in trigger
    )


def test_no_run_where_the_stages_differ_fill_the_gpu_or_stand_alone():
    good = _load("good")
    assert batch_across_stages(good, assess(good).stages) is None  # one stage
    r = _load("bad")
    a = assess(r)
    wide = r.model_copy(update={"stages": [s.model_copy(update={"grid_blocks": 264}) for s in r.stages]})
    assert batch_across_stages(wide, assess(wide).stages) is None  # each launch fills the GPU
    other = r.model_copy(
        update={
            "stages": [
                r.stages[0],
                r.stages[1].model_copy(update={"ncu_kernels": ["other_kernel"]}),
                r.stages[2],
            ]
        }
    )
    assert batch_across_stages(other, assess(other).stages) is None  # no two in a row of one kernel
    conc = r.model_copy(update={"plan_kind": "concurrent"})
    assert batch_across_stages(conc, a.stages) is None  # already on streams of their own


def test_event_mode_names_the_kernel_from_cupti():
    """Without Nsight Compute (event mode) CUPTI's kernel times name each stage's kernel: one launch a run."""
    from kprof_mcp.models.result import KernelTime

    r = _load("bad")

    def cupti(s, name="matmul_kernel", launches=1.0):
        kt = KernelTime(
            name=name, launches_per_run=launches, median_ns=s.timing.median_ns, total_median_ns=0.0
        )
        return s.model_copy(update={"ncu_kernels": [], "kernel_times": [kt]})

    event = r.model_copy(update={"stages": [cupti(s) for s in r.stages]})
    o = batch_across_stages(event, assess(event).stages)
    assert o is not None and o.facts.kernel == "matmul_kernel" and o.facts.kernels == 3
    twice = r.model_copy(update={"stages": [cupti(s, launches=2.0) for s in r.stages]})
    assert (
        batch_across_stages(twice, assess(twice).stages) is None
    )  # two launches a run: not one small launch
