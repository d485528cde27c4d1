"""A command's kernels timed without counters, far from the model's roof (issue 36, after the eleventh
held-back set): nothing measured says their warps wait, so the headroom is not called latency; it is the work
the kernels do beyond the model, or a costlier method (``move_work``, the ``over_model`` move), and the kernel
taking most of the kernel time is named. Kernels profiled with counters keep the latency advice."""

import sys
from pathlib import Path

import pytest

from kprof_mcp.analysis import diagnosis as A
from kprof_mcp.analysis.diagnosis import Metrics
from kprof_mcp.render.diagnosis.words import _short

CAL = Path(__file__).resolve().parents[1] / "calibration"


def _latency_bound(attainable_ns: float = 1.05e6, **kw) -> Metrics:
    # 10 ms measured where the model's work takes 1 ms at the roof (1.05 ms at the attainable rate); nothing
    # near its peak.
    return Metrics(
        tc_pct=None,
        dram_pct=3.0,
        compute_pct=9.0,
        time_ns=10e6,
        sol_ns=1e6,
        attainable_sol_ns=attainable_ns,
        **kw,
    )


def test_a_command_stage_without_counters_gets_the_work_beyond_its_model_not_latency():
    opps = A.opportunities(
        _latency_bound(command_no_counters=True, top_kernel=("void cusparse::csrmm<long>(T)", 0.98))
    )
    top = opps[0]
    assert top.cause == "move_work" and top.facts.move == "over_model" and not top.specific
    assert top.facts.kernel.startswith("void cusparse::csrmm") and top.facts.value == pytest.approx(98.0)
    assert top.facts.time_over_roof == pytest.approx(10.0)
    assert not any(o.cause == "latency" for o in opps)


def test_near_the_roof_a_command_stage_keeps_the_generic_advice():
    # 10 ms where the model's work takes 6 ms at the attainable rate: under twice it, not "that far"
    opps = A.opportunities(_latency_bound(6e6, command_no_counters=True, top_kernel=("k", 1.0)))
    assert not any(o.facts.move == "over_model" for o in opps)


def test_a_kernel_profiled_alone_keeps_the_latency_advice():
    opps = A.opportunities(_latency_bound())
    assert opps[0].cause == "latency"
    assert not any(o.facts.move == "over_model" for o in opps)


def test_the_same_headroom_either_way():
    a = A.opportunities(_latency_bound(command_no_counters=True))[0]
    b = A.opportunities(_latency_bound())[0]
    assert a.share == pytest.approx(b.share) and a.share > 0.5


def test_kernel_names_are_shortened_without_templates_or_parameters():
    assert (
        _short(
            "void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::Meta<(int)2>, x>(T1, T2)"
        )
        == "at::native::multi_tensor_apply_kernel"
    )
    assert _short("void cusparse::csrmm_alg2_kernel<(bool)0, long>(T4, T4)") == "cusparse::csrmm_alg2_kernel"
    assert _short("triton_poi_fused_0") == "triton_poi_fused_0"


def test_the_recorded_sparse_product_names_the_csr_kernel_first():
    """The eleventh held-back set's CSR pair (judged once before this change: "expose more parallelism"):
    98.8 % of its kernel time is cuSPARSE's csrmm, 10.5x the dense model's roof; the fix (dense weights)
    measured +396 %."""
    sys.path[:0] = [str(CAL), str(CAL.parent)]
    import table

    r = table.load(CAL / "recorded-heldout11/half_dense_matrix_multiplied_as_a_sparse_tensor/bad.result.json")
    top = table.assess(r).opportunities[0]
    assert top.cause == "move_work"
    assert "cusparse::csrmm_alg2_kernel: 98.8% of the kernel time" in top.name
    assert "no counters" in top.trigger


def test_a_serial_library_kernel_far_from_the_roof_is_its_own_what_if_and_few_blocks_only_its_kernels():
    """The 22nd held-back set's spectral normalisation (a full SVD a layer a step, recorded on an H100): 65 %
    of the step's kernel time is cuSOLVER's batched Jacobi kernel on 8 blocks, the GPU metrics sampling it
    at 2.7 % issue, 1 % warps, no DRAM (serial), 852x the model's roof. Filling the SMs speeds up that
    kernel alone (its share of the kernel time), not the whole stage; the work beyond the model is its
    own what-if (that kernel's time gone, the other kernels kept), not what the few-blocks share leaves: it
    ranks first (+113 % for a measured +3,423 %: the fix also removes the SVD's other kernels, its 1,600
    launches and its reads a step)."""
    sys.path[:0] = [str(CAL), str(CAL.parent)]
    import table

    where = "recorded-heldout22/spectral_normalisation_by_a_full_SVD_every_step_where_one_power_iteration_step_with_persistent_vectors_serves"
    a = table.assess_facts(table.load(CAL / where / "bad.result.json"))
    m = a.stages[0].metrics
    assert m.command_no_counters and m.grid_blocks == 8 and 0.6 < m.top_kernel[1] < 0.7
    opps = a.stages[0].diagnosis.opportunities
    few = next(o for o in opps if o.cause == "few_blocks")
    assert few.share == pytest.approx(m.top_kernel[1] * (1 - 8 / m.sm_count) * m.kernel_busy)
    top = opps[0]
    assert top.cause == "move_work" and top.facts.move == "over_model" and top.specific
    assert top.share == pytest.approx(
        min(m.headroom, m.top_kernel[1]) * m.kernel_busy
    )  # that kernel's time goes
    assert a.opportunities[0].opportunity is top


def test_a_narrower_move_of_part_of_the_work_does_not_hide_the_stage_s_excess():
    """The 37th held-back set's per-point Jacobians by reverse mode (judged once before this change: the TF32
    move first at +4.8 % for a measured +101 %): 66 % of the step's kernel time is cuBLAS's FFMA GEMM, sampled
    busy (issue 79 %), and the kernels take 18x the model's attainable time. The TF32 move takes only the
    model's FLOPs off the FMA pipe (5 % of its peak); it does not stand for the work beyond the model, whose
    what-if (the headroom, +916 %) is listed, named at that GEMM, and ranks first; the TF32 move stays below."""
    sys.path[:0] = [str(CAL), str(CAL.parent)]
    import table

    where = (
        "recorded-heldout37/per_point_Jacobians_of_a_tall_coordinate_network__R_3____R_32__computed_in_reverse_"
        "mode__vmap_jacrev___a_VJP_a_row__where_forward_mode__vmap_jacfwd___a_JVP_a_column__serves"
    )
    a = table.assess_facts(table.load(CAL / where / "bad.result.json"))
    m = a.stages[0].metrics
    opps = a.stages[0].diagnosis.opportunities
    assert m.command_no_counters and m.top_activity["issue_pct"] > 70
    tf32 = next(o for o in opps if o.facts.move == "ffma_dot_to_tf32")
    top = opps[0]
    assert top.cause == "move_work" and top.facts.move == "over_model" and not top.specific
    assert "ffma" in top.facts.kernel and top.share > 10 * tf32.share
    assert top.share == pytest.approx(m.headroom - tf32.share, rel=1e-6)  # what the specific causes leave
