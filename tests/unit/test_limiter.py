"""The machine model's limiter and what-ifs (analysis.diagnosis.limiter), on real H100 recordings
(tests/calibration/recorded-accounting, 2026-11-24) and on accounting built from Nsight Compute's own
counter names, pipe by pipe and level by level, with and without counters."""

from dataclasses import replace
from pathlib import Path

import pytest

from kprof_mcp import machines
from kprof_mcp.analysis.accounting import account
from kprof_mcp.analysis.assessment import assess, stage_metrics
from kprof_mcp.analysis.diagnosis import Metrics, opportunities
from kprof_mcp.analysis.diagnosis.limiter import NEAR_PEAK, limiter
from kprof_mcp.analysis.diagnosis.moves import what_if_moves
from kprof_mcp.analysis.diagnosis.parallelism import fill_share, occupancy_share
from kprof_mcp.analysis.machine_inputs import machine_for
from kprof_mcp.models import ProfileResult

REC = Path(__file__).resolve().parents[1] / "calibration" / "recorded-accounting"
H100 = machines.load("sm_90", "H100_SXM")


def _bad(pair: str) -> ProfileResult:
    return ProfileResult.model_validate_json((REC / pair / "bad.result.json").read_text())


def _metrics(pair: str) -> Metrics:
    r = _bad(pair)
    mhz = float(r.device.clocks_before.get("clocks.max.sm") or 0) or None
    return stage_metrics(r.stages[0], mhz, 1.0, r, machine_for(r))


def _acc(**pipes_pct) -> dict:
    """An accounting of Nsight Compute's counters: pipe utilisation (% of peak over active cycles) and
    an issue-active %, the SMs active throughout."""
    acc = {"sm_cycles_active": 1e6, "sm_cycles_elapsed": 1e6, "stall_wait": 1.0, "stall_selected": 1.0}
    for k, v in pipes_pct.items():
        acc[k if k.endswith("_pct") else f"pipe_{k}_pct"] = v
    return acc


def _m(acc: dict, machine=H100, **kw) -> Metrics:
    base = dict(
        time_ns=1e6,
        sol_ns=1e5,
        best_sol_ns=1e5,
        dram_pct=5.0,
        compute_pct=50.0,
        tc_pct=0.0,
        accounting=account(acc, 0.0),
        machine=machine,
        dtype="float32",
        sm_count=132,
        grid_blocks=10_000,
    )
    base.update(kw)
    return Metrics(**base)


def test_the_shipped_table_has_every_architecture_and_the_h100_measured_beside_it():
    for arch in ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100"):
        m = machines.load(arch)
        assert m is not None and m.rate("fma") and m.rate("fp64") and m.rate("xu")
    assert H100.device_key == "H100_SXM" and H100.pipes["fma"].measured
    # measured and documented side by side: the table's rate is kept where the measured one differs
    assert H100.pipes["tensor_bf16"].table == 4096 and 0.85 < H100.rate("tensor_bf16") / 4096 < 1.0
    assert {k for k, *_ in H100.differences()} >= {"tensor_bf16", "fp64"}


def test_fp64_pipe_limit_moves_to_fp32_at_the_rates_of_the_table():
    # FP64 pipe 90 % busy: the same ops on the FMA pipe at (rate_fp64 / rate_fma) of the time.
    m = _m(_acc(fp64=90.0, fma=5.0, issue_active_pct=45.0))
    lim = limiter(m)
    assert lim.resource == "fp64" and lim.bound and lim.util == pytest.approx(0.9)
    (cause, share, facts), *_ = what_if_moves(m, lim)
    assert cause == "move_work" and facts["resource"] == "fp64" and facts["target"] == "fma"
    moved, added = 0.9, 0.9 * H100.rate("fp64") / H100.rate("fma")
    assert share == pytest.approx(moved - added - 0.0, abs=1e-9)  # T' = T - moved + added
    # On a consumer Ada part (FP64 at 2 ops/clk/SM) the same move is worth far more.
    # (its issue slots barely used: 2 DFMA lanes a clock take 1/64 of them)
    ada_m = _m(_acc(fp64=90.0, fma=5.0, issue_active_pct=6.0), machine=machines.load("sm_89"))
    ada = what_if_moves(ada_m, limiter(ada_m))[0][1]
    assert ada > share and 1.0 / (1.0 - ada) > 5.0


def test_a_move_never_beats_the_next_limiter():
    # FP64 at 90 %, DRAM at 80 %: moving the math leaves the DRAM traffic, T' >= 0.8 T.
    m = _m(_acc(fp64=90.0), dram_pct=80.0)
    (_, share, facts), *_ = what_if_moves(m, limiter(m))
    assert share == pytest.approx(0.2) and facts["next_limiter"] == "dram"


def test_no_move_where_the_limiter_is_memory_or_the_work_is_not_there():
    assert what_if_moves(_m(_acc(fp64=30.0), dram_pct=85.0), None) == []
    m = _m(_acc(fp64=30.0), dram_pct=85.0)
    assert limiter(m).resource == "dram" and what_if_moves(m, limiter(m)) == []
    # an FMA chain that is no dot (no GEMM name, no shared-memory operands, no tl.dot in its TTIR)
    chain = _m(_acc(fma=99.0, issue_active_pct=99.0), kernel_names=("iterate",))
    assert limiter(chain).resource in ("fma", "issue") and what_if_moves(chain, limiter(chain)) == []
    # the TTIR says the FMA work is a tl.dot in ieee fp32: the tensor cores at TF32 can take it
    dot = replace(chain, ir_ops=({"kind": "dot", "detail": "f32 ieee", "line": "impl.py:42", "count": 1},))
    (_, share, facts), *_ = what_if_moves(dot, limiter(dot))
    assert facts["target"] == "tensor_tf32" and facts["lines"] == ("impl.py:42",) and share > 0.5
    # ...unless the tensor pipe already runs: then the FMAs are the epilogue's
    busy = replace(dot, accounting=account(_acc(fma=99.0, issue_active_pct=99.0), 40.0))
    assert what_if_moves(busy, limiter(busy)) == []


def test_precise_transcendentals_move_to_the_xu_pipe_only_on_the_ttirs_word():
    m = _m(_acc(fma=85.0, alu=30.0, xu=1.0, issue_active_pct=80.0))
    assert [f["move"] for *_, f in what_if_moves(m, limiter(m))] == []
    sin = replace(m, ir_ops=({"kind": "libdevice", "detail": "__nv_sinf", "line": "k.py:8", "count": 4},))
    (_, share, facts), *_ = what_if_moves(sin, limiter(sin))
    assert facts["move"] == "precise_to_fast_math" and facts["target"] == "xu" and share > 0.0


def test_the_gemm_on_the_fma_pipes_is_told_to_use_tensor_cores_within_the_speed_of_light():
    # The package's model need not say tensor_cores=True: the kernel's name says it is a GEMM.
    r = _bad("GEMM_on_the_FMA_pipes")
    s = r.stages[0].model_copy(update={"tensor_cores": False, "peak_flops_per_s": 66.9e12})
    m = stage_metrics(s, 1980.0, 1.0, r, machine_for(r))
    lim = limiter(m)
    assert lim.resource == "issue" and lim.bound  # 76 % issue, 68 % FMA: the FFMAs fill the issue slots
    top = opportunities(m)[0]
    assert top.cause == "move_work" and top.facts.target == "tensor_tf32"
    assert top.share <= m.best_headroom
    # the FMA pipe's roof (T_sol at fp32 SIMT) would have allowed far less than the move gives
    assert top.share > m.headroom


def test_healthy_and_near_roof_kernels_name_their_limiter_and_get_no_move():
    near = _metrics("near_roof_GEMM")
    assert limiter(near).resource == "tensor" and limiter(near).util >= NEAR_PEAK
    assert not [o for o in opportunities(near) if o.cause == "move_work"]
    va = _metrics("healthy_memory_bound")
    assert limiter(va).resource == "dram" and not [o for o in opportunities(va) if o.cause == "move_work"]


def test_too_few_blocks_is_filled_by_littles_law_down_to_the_busiest_resource():
    m = _metrics("too_few_blocks")
    lim = limiter(m)
    share = fill_share(m, lim)
    # 16 programs on 132 SMs, each SM at 6 % of its warps: filled at 100 % occupancy the kernel would
    # be 100x more parallel, so DRAM bounds it, not the SMs' count (1 - 16/132 would need DRAM at 102 %).
    assert share is not None and share > 0.8
    dram = next(u for u in lim.uses if u.key == "dram")
    assert (1.0 - share) * m.time_ns >= dram.util * m.time_ns / 0.9 - 1e-6  # never past 90 % of DRAM


def test_without_counters_the_model_runs_on_the_flop_byte_model_and_says_so():
    m = Metrics(
        time_ns=1e6,
        sol_ns=4e5,
        best_sol_ns=2e5,
        compute_pct=90.0,
        dram_pct=3.0,
        machine=H100,
        dtype="float64",
    )
    lim = limiter(m)
    assert lim.resource == "fp64" and lim.source == "model"
    (_, share, facts), *_ = what_if_moves(m, lim)
    assert facts["target"] == "fma" and facts["source"] == "model" and share > 0.3


@pytest.mark.parametrize("pair", sorted(p.name for p in REC.iterdir() if (p / "bad.result.json").exists()))
def test_no_gain_passes_the_speed_of_light_of_the_best_legal_mix(pair):
    r = _bad(pair)
    a = assess(r)
    for sa in a.stages:
        if sa.diagnosis is None or sa.metrics is None or sa.metrics.best_headroom is None:
            continue
        for o in sa.diagnosis.opportunities:
            if o.cause == "ncu":
                continue
            assert o.share <= sa.metrics.best_headroom * max(sa.metrics.kernel_busy, 1.0) + 1e-9, (
                o.cause,
                pair,
            )


def test_no_use_passes_its_peak_even_when_a_counter_reads_over_it():
    m = _m(_acc(fp64=101.3, issue_active_pct=100.4), dram_pct=100.9)
    lim = limiter(m)
    assert all(0.0 <= u.util <= 1.0 for u in lim.uses) and lim.util == 1.0


def test_lifting_the_occupancy_limit_is_littles_law_to_the_next_limit():
    # Registers allow 2 blocks per SM, shared memory 8: lifted, 4x the warps in flight (12 % -> 48 %),
    # so a latency-bound stage's time / 4, floored at its busiest resource at the attainable rate.
    acc = {**_acc(fma=10.0, issue_active_pct=12.0), "occ_limit_registers": 2.0, "occ_limit_shared_mem": 8.0}
    m = _m(acc, occupancy_pct=12.0, dram_pct=5.0)
    share = occupancy_share(m, limiter(m))
    assert share == pytest.approx(0.75)
    # with DRAM at 40 % the floor is 40/90 of the time
    m2 = _m(acc, occupancy_pct=12.0, dram_pct=40.0)
    assert occupancy_share(m2, limiter(m2)) == pytest.approx(1.0 - 0.4 / 0.9)
    # a grid with no more blocks per SM than the limit already allows gains nothing
    assert occupancy_share(replace(m, grid_blocks=200), limiter(m)) is None
