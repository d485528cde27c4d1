"""Issue 39 item 2: communication per rank and step, the skew at the collectives, the straggler and the
what-ifs (kprof_mcp.analysis.comm, analysis.ranks), their opportunities, root cause and report.

On synthetic per-rank traces with known waits, and on a real recording: tests/fixtures/cpu_ranks_gloo
holds what ``kprof run --cpu -- python spawn_job.py`` left (2 gloo ranks by torch.multiprocessing.spawn
on the 2-core CPU machine, 2026-11-26; rank 1 sleeps 150 ms in each of 5 steps before the all_reduce):
its ranks/ directory, result.json and the script."""

from pathlib import Path

import pandas as pd
import pytest

from kprof_mcp.analysis import comm
from kprof_mcp.analysis.assessment import assess as assess_facts
from kprof_mcp.analysis.ranks import rank_communication, rank_opportunities, rank_root_cause, rank_stages
from kprof_mcp.capture import ranks as capture_ranks
from kprof_mcp.models import ProfileResult
from kprof_mcp.parsers.kineto import KERNEL_COLUMNS, Trace
from kprof_mcp.render.contract import render_contract
from kprof_mcp.render.diagnosis import assess
from kprof_mcp.render.report import rank_section

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "cpu_ranks_gloo"
MS = 1e6
SLEEP_NS = 150 * MS  # the fixture's planted sleep


def _df(rows, cols):
    return pd.DataFrame(rows, columns=cols)


def _trace(ranges=(), ops=(), kernels=(), launches=()) -> Trace:
    """A trace from (name, start, end[, tid]) ranges and CPU ops, kernels (name, start, end, stream,
    correlation) and launches (start, correlation), times in ns."""
    rng = [
        {"name": r[0], "start": r[1], "dur": r[2] - r[1], "end": r[2], "tid": r[3] if len(r) > 3 else 1}
        for r in ranges
    ]
    op = [
        {"name": o[0], "start": o[1], "dur": o[2] - o[1], "end": o[2], "tid": o[3] if len(o) > 3 else 1}
        for o in ops
    ]
    ks = [
        dict.fromkeys(KERNEL_COLUMNS)
        | {"name": n, "start": s, "dur": e - s, "end": e, "stream": st, "correlation": c}
        for n, s, e, st, c in kernels
    ]
    api = [
        {"name": "cudaLaunchKernel", "start": s, "dur": 5e3, "end": s + 5e3, "correlation": c, "tid": 1}
        for s, c in launches
    ]
    return Trace(
        kernels=_df(ks, KERNEL_COLUMNS),
        memops=_df([], ["name", "start", "dur", "end", "kind", "stream", "bytes", "correlation"]),
        api=_df(api, ["name", "start", "dur", "end", "correlation", "tid"]),
        ranges=_df(rng, ["name", "start", "dur", "end", "tid"]),
        cpu_ops=_df(op, ["name", "start", "dur", "end", "tid"]),
        num_sms=None,
        device_name=None,
    )


def test_communication_is_recognised_by_name_in_one_place():
    kind = comm.comm_kind
    assert kind("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)") == "kernel"
    assert kind("void ncclKernel_AllReduce_RING_LL_Sum_float(ncclWork*)") == "kernel"
    assert kind("gloo:all_reduce") == "backend" and kind("ucc:all_gather") == "backend"
    assert kind("c10d::allreduce_") == "issue" and kind("_c10d_functional::all_reduce") == "issue"
    assert kind("record_param_comms") == "other" and kind("nccl:all_reduce") == "other"
    assert kind("aten::mm") is None and kind("sm90_xmma_gemm_bf16bf16_bf16f32") is None
    assert kind("void at::native::vectorized_elementwise_kernel<4>") is None


def _cpu_rank(compute_ms: float, host_ms: float, x_ms: float, late_ms: float, steps: int = 4) -> Trace:
    """A gloo rank: per step, ``compute_ms`` of operators and ``host_ms`` of nothing in range "step",
    then range "sync" around c10d's issue and gloo's collective (worker thread 9), which ends
    ``x_ms`` after the last rank arrives, that rank ``late_ms`` after the one given here."""
    ranges, ops, t = [], [], 0.0
    for _ in range(steps):
        work = (compute_ms + host_ms) * MS
        ranges.append(("step", t, t + work))
        ops.append(("aten::mm", t, t + compute_ms * MS))
        arrive = t + work + 0.01 * MS
        end = arrive + (late_ms + x_ms) * MS
        ranges += [
            ("sync", t + work + 0.005 * MS, end + 0.02 * MS),
            ("gloo:all_reduce", arrive + 0.02 * MS, end, 9),
        ]
        ops.append(("c10d::allreduce_", arrive, arrive + 0.01 * MS))
        t = end + 0.05 * MS
    return _trace(ranges, ops)


def _pair(rank1_compute_ms: float, rank1_host_ms: float, x_ms: float = 2.0):
    """Rank 0: 10 ms of compute per step; rank 1 as given; both start together, rank 0 waits."""
    extra = rank1_compute_ms + rank1_host_ms - 10.0
    r0 = _cpu_rank(10.0, 0.0, x_ms, late_ms=extra)
    r1 = _cpu_rank(rank1_compute_ms, rank1_host_ms, x_ms, late_ms=0.0)
    steps = [
        comm.rank_steps(f"rank{i}", i, tr, 1_790_000_000 * 10**9, [], 1) for i, tr in enumerate((r0, r1))
    ]
    return comm.communication(steps)


def test_a_sleeping_rank_is_the_straggler_late_by_its_host_time_and_its_removal_replayed():
    rows, s = _pair(10.0, 50.0)
    assert (s["ranks"], s["steps"], s["collectives"]) == (2, 3, 3)  # 4 steps, the first as warm-up
    assert rows["rank0"]["wait_ns"] == pytest.approx(50 * MS, rel=1e-3) and rows["rank1"]["wait_ns"] == 0
    assert rows["rank1"]["late_ns"] == pytest.approx(50 * MS, rel=1e-3) and rows["rank0"]["late_ns"] == 0
    assert rows["rank1"]["host_ns"] == pytest.approx(50 * MS, rel=0.01)  # the sleep: neither compute nor comm
    assert rows["rank0"]["compute_ns"] == pytest.approx(10 * MS) and rows["rank0"]["overlap_pct"] == 0
    assert rows["rank0"]["exposed_ns"] == rows["rank0"]["comm_ns"] == pytest.approx(52.01 * MS, rel=1e-3)
    st = s["straggler"]
    assert (st["rank"], st["why"], st["last_pct"]) == (1, "host", 100.0)
    assert st["late_ns"] == pytest.approx(50 * MS, rel=1e-3)
    assert st["extra_host_ns"] == pytest.approx(50 * MS, rel=0.01) and abs(st["extra_compute_ns"]) < 0.1 * MS
    # The chain: 60 ms of the straggler's work + 2 ms transfer per step; without its 50 ms extra, 12.
    assert st["replay_ns"] == pytest.approx(s["recorded_period_ns"], rel=0.01)
    assert st["replay_ns"] == pytest.approx(62.1 * MS, rel=0.01) and st["whatif_ns"] == pytest.approx(
        12.1 * MS, rel=0.02
    )
    assert st["share"] == pytest.approx(1 - 12.1 / 62.1, rel=0.02)


def test_a_rank_with_more_compute_is_late_for_its_compute():
    _, s = _pair(45.0, 0.0)
    st = s["straggler"]
    assert (st["rank"], st["why"]) == (1, "compute")
    assert st["extra_compute_ns"] == pytest.approx(35 * MS, rel=0.01) and st["late_ns"] == pytest.approx(
        35 * MS, rel=1e-3
    )


def test_balanced_ranks_have_no_straggler_worth_an_opportunity():
    rows, s = _pair(10.0, 0.0, x_ms=0.05)
    assert rows["rank0"]["wait_ns"] == rows["rank1"]["wait_ns"] == 0
    assert s["straggler"] is None and rank_opportunities({"communication": s}) == []
    _, s = _pair(10.0, 0.0, x_ms=2.0)  # a 2 ms collective no compute overlaps: worth overlapping
    assert [o.cause for o in rank_opportunities({"communication": s})] == ["exposed_comm"]


def test_the_chain_replay():
    # Two collectives: ranks ready after (3, 5) then (4, 1) ms of work, 1 ms transfers; both start at 0.
    assert comm.replay([[3, 5], [4, 1]], [1, 1], [0, 0]) == 5 + 1 + 4 + 1
    assert comm.replay([[3, 3], [4, 1]], [1, 1], [0, 0]) == 3 + 1 + 4 + 1


def _gpu_rank(offset_ms: float) -> Trace:
    """A GPU rank: per step a range around a 10 ms GEMM on stream 7 and a 4 ms NCCL all-reduce on
    stream 20 that starts when the GEMM is half done (2 ms of it overlapped), then 4 ms of GEMM after."""
    ranges, kernels, launches, t, corr = [], [], [], offset_ms * MS, 0
    for _ in range(3):
        ranges.append(("train_step", t, t + 1 * MS))
        for name, s, e, stream in (
            ("sm90_xmma_gemm_f32", 1, 11, 7),
            ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 9, 13, 20),
            ("sm90_xmma_gemm_f32", 13, 17, 7),
        ):
            corr += 1
            launches.append((t + 0.1 * MS * corr % 1e6, corr))
            kernels.append((name, t + s * MS, t + e * MS, stream, corr))
        t += 20 * MS
    return _trace(ranges, kernels=kernels, launches=launches)


def test_an_nccl_kernel_is_communication_and_compute_on_another_stream_hides_part_of_it():
    steps = [comm.rank_steps(f"rank{i}", i, _gpu_rank(0.0), 0, [], 0) for i in range(2)]
    rows, s = comm.communication(steps)
    r = rows["rank0"]
    assert r["comm_ns"] == pytest.approx(4 * MS) and r["compute_ns"] == pytest.approx(14 * MS)
    assert r["exposed_ns"] == pytest.approx(2 * MS) and r["overlap_pct"] == pytest.approx(50.0)
    assert r["step_ns"] == pytest.approx(17 * MS) and r["host_ns"] == pytest.approx(
        1 * MS
    )  # 0-1 ms: launches
    assert r["wait_ns"] == 0 and s["straggler"] is None
    e = s["exposed"]  # 2 ms exposed, 12 ms of compute not under it yet: all 2 ms hideable
    assert e["transfer_ns"] == pytest.approx(2 * MS) and e["hideable_ns"] == pytest.approx(2 * MS)
    assert e["share"] == pytest.approx(2 / 17, rel=1e-3)
    (o,) = rank_opportunities({"communication": s})
    assert (
        o.cause == "exposed_comm"
        and o.facts.rank in (0, 1)
        and o.est_gain_pct == pytest.approx(100 * (17 / 15 - 1), rel=1e-3)
    )


def _recorded():
    """The fixture's ranks, stages and table, with the communication recomputed from their traces."""
    procs = capture_ranks.collect(FIX / "ranks")
    stages, table, _ = rank_stages(procs, [], use_gpu=False, warmup=1)
    return procs, stages, table, rank_communication(procs, [], 1, table)


def test_the_recorded_planted_sleep_names_rank_1_late_by_about_the_sleep():
    _, _, table, s = _recorded()
    st = s["straggler"]
    assert (st["rank"], st["why"], st["last_pct"]) == (1, "host", 100.0)
    assert 0.6 * SLEEP_NS < st["late_ns"] < 1.4 * SLEEP_NS, st
    assert 0.8 * SLEEP_NS < st["extra_host_ns"] < 1.2 * SLEEP_NS, st  # the sleep is host time, not compute
    assert st["replay_ns"] == pytest.approx(s["recorded_period_ns"], rel=0.05)  # the replay keeps the step
    assert st["share"] > 0.5 and st["whatif_ns"] < 0.3 * st["replay_ns"]
    rows = {r["rank"]: r for r in table}
    assert rows[0]["wait_ns"] == pytest.approx(st["late_ns"], rel=0.05) and rows[1]["wait_ns"] == 0
    assert rows[1]["host_ns"] > 0.8 * SLEEP_NS and rows[0]["exposed_ns"] > 0.8 * st["late_ns"]
    assert s["exposed"]["share"] < 0.01  # a 96x96 all_reduce: nothing worth overlapping


def test_the_straggler_is_the_root_cause_and_the_top_opportunity_naming_its_rank():
    _, _, table, s = _recorded()
    result = ProfileResult.model_validate_json((FIX / "result.json").read_text())
    result.command["ranks"], result.command["communication"] = table, s
    facts = assess_facts(result)
    assert facts.root_cause.kind == "straggler" and facts.root_cause.values["rank"] == 1
    top = facts.opportunities[0]
    assert (top.cause, top.source, top.stage, top.opportunity.facts.rank) == ("straggler", "ranks", None, 1)
    assert top.opportunity.share == pytest.approx(s["straggler"]["share"])
    contract = render_contract(result, assessment=assess(result))
    assert (
        "**Root cause**: Rank 1 is the straggler: the other ranks wait for it at the collectives" in contract
    )
    assert (
        "ms more host time" in contract
        and "1. Even out rank 1, the straggler: take host work out" in contract
    )
    # a wait its what-if cannot recover (ranks one phase apart): under 0.5 / R of the step
    assert rank_root_cause({"communication": dict(s, straggler=dict(s["straggler"], share=0.2))}) is None
    assert rank_root_cause({"communication": dict(s, straggler=dict(s["straggler"], share=0.3))}) is not None
    late = dict(s["straggler"], late_ns=0.4 * s["straggler"]["replay_ns"])  # the others wait < half a step
    assert rank_root_cause({"communication": dict(s, straggler=late)}) is None


def test_the_rank_table_gains_the_per_step_columns_and_names_the_straggler():
    _, _, table, s = _recorded()
    lines = rank_section(table, s)
    text = "\n".join(lines)
    assert (
        "| Step (ms) | Compute (ms) | Comm (ms) | Exposed (ms) | Overlap % | Host (ms) | Wait (ms) | Late (ms) | Note |"
        in text
    )
    assert "Straggler: rank 1, late " in text and f"medians over {s['steps']} steps" in text
    row1 = next(ln for ln in lines if ln.startswith("| 1 |"))
    assert len(row1.split("|")) == len(lines[3].split("|"))  # as many cells as the header
    assert "Wait (ms)" not in "\n".join(rank_section(table))  # without the summary: the table as before


def test_a_gpu_rank_whose_collectives_are_gloo_ones_of_cpu_tensors_has_them_matched():
    """GPU kernels as compute, no NCCL kernel: gloo's collectives (c10d op to gloo's range) are its
    communication, and the rank that issues its later waits less."""

    def rank(arrive_ms: float) -> Trace:
        ranges, ops, kernels, launches = [], [], [], []
        for k in range(3):
            t = k * 100 * MS
            ranges += [("step", t, t + 60 * MS), ("gloo:all_reduce", t + arrive_ms * MS, t + 70 * MS, 9)]
            ops.append(("c10d::allreduce_", t + arrive_ms * MS, t + arrive_ms * MS + 0.01 * MS))
            kernels.append(("sm90_xmma_gemm_f32", t + 1 * MS, t + 5 * MS, 7, k + 1))
            launches.append((t + 0.5 * MS, k + 1))
        return _trace(ranges, ops, kernels, launches)

    steps = [comm.rank_steps(f"rank{i}", i, rank(a), 0, [], 0) for i, a in enumerate((10.0, 40.0))]
    rows, s = comm.communication(steps)
    assert s["collectives"] == 3 and rows["rank0"]["wait_ns"] == pytest.approx(30 * MS)
    assert rows["rank0"]["compute_ns"] == pytest.approx(4 * MS)  # the GEMM kernel, not the CPU ops
    assert s["straggler"]["rank"] == 1 and s["straggler"]["late_ns"] == pytest.approx(30 * MS)


GPU_FIX = Path(__file__).resolve().parents[1] / "fixtures" / "gpu_ranks_nccl"
GPU_SLEEP_NS = 40 * MS  # ddp_job.py's planted sleep


def test_a_recorded_nccl_job_on_two_h100s_names_the_sleeping_rank():
    """tests/fixtures/gpu_ranks_nccl: ``kprof run --mode event -- python ddp_job.py`` on 2 x H100 (NVLink,
    NCCL 2.28.9, torch 2.11, 2026-11-26; docs/evidence/ranks/): two ranks by torch.multiprocessing.spawn,
    eight bf16 4096^3 GEMMs then an all_reduce per step, rank 1 sleeping 40 ms before it. The NCCL kernels
    are communication: rank 0 spends the sleep inside its all_reduce kernel (exposed, nothing overlaps it),
    rank 1 is the straggler, late by about the sleep, for host time; without it the step replays at about its
    GEMMs' and all_reduce's time."""
    procs = capture_ranks.collect(GPU_FIX / "ranks")
    _, table, _ = rank_stages(procs, [], use_gpu=True, warmup=1)
    s = rank_communication(procs, [], 1, table)
    st = s["straggler"]
    assert (st["rank"], st["why"], st["last_pct"]) == (1, "host", 100.0)
    assert 0.8 * GPU_SLEEP_NS < st["late_ns"] < 1.2 * GPU_SLEEP_NS, st
    assert 0.8 * GPU_SLEEP_NS < st["extra_host_ns"] < 1.2 * GPU_SLEEP_NS, st
    rows = {r["rank"]: r for r in table}
    assert rows[0]["comm_ns"] > 0.8 * GPU_SLEEP_NS and rows[0]["exposed_ns"] == pytest.approx(
        rows[0]["comm_ns"]
    )
    assert rows[0]["wait_ns"] == pytest.approx(st["late_ns"], rel=0.05) and rows[1]["wait_ns"] == 0
    assert 1 * MS < rows[1]["compute_ns"] < 3 * MS  # eight 4096^3 bf16 GEMMs on an H100: ~0.2 ms each
    assert st["whatif_ns"] < 0.1 * st["replay_ns"] and st["replay_ns"] == pytest.approx(
        s["recorded_period_ns"], rel=0.05
    )


def test_more_compute_on_one_rank_is_evened_out_not_removed():
    """Issue 39's held-back set: uneven shards move work, they do not remove it. A rank with 35 ms more
    compute before each collective: the what-if gives each of the 2 ranks half of it (17.5 ms off the
    step), where capping it at the others' took all 35 ms away (7.6x over on the recorded pair)."""
    _, s = _pair(45.0, 0.0)
    st = s["straggler"]
    assert st["replay_ns"] - st["whatif_ns"] == pytest.approx(17.5 * MS, rel=0.01)


def _phase(busy1_ms: float) -> dict:
    """Two ranks, one collective a step of 10 ms: rank 0's host ahead (its collective queued, arriving
    1.5 ms into its lead-up), rank 1's kernel starting 9.5 ms after the previous end; rank 0's host did
    9 ms of its own work per step, rank 1's ``busy1_ms``."""
    ranks = []
    for label, arrive, busy in (("rank0", 1.0, 9.0), ("rank1", 9.0, busy1_ms)):
        steps = [(k * 10 * MS, (k + 1) * 10 * MS) for k in range(4)]
        colls = [
            [comm.Collective("ncclDevKernel_AllReduce", (10 * k + arrive) * MS, (10 * k + 9.5) * MS)]
            for k in range(4)
        ]
        before = {k: (10 * (k - 1) + 9.5) * MS for k in range(1, 4)}
        cm = [(c[0].arrival, c[0].end) for c in colls]
        ranks.append(
            comm.RankSteps(label, int(label[-1]), 0.0, steps, colls, [], cm, before, [busy * MS] * 4)
        )
    return comm.communication(ranks)[1]["straggler"]


def test_ranks_one_phase_apart_are_no_straggler_to_even_out():
    """The held-back per-parameter all-reduce: both hosts issue at one pace (39.0 and 39.2 ms of host work a
    step), one ahead by a phase; on the GPU's clock the other is "late" most of the step. Only the host
    work it does beyond the others' (host_busy) is taken off the step."""
    st = _phase(9.0)
    assert (st["rank"], st["why"]) == (1, "host") and st["late_ns"] > 7 * MS
    assert st["host_more_ns"] == 0 and st["share"] == 0
    assert rank_root_cause({"communication": {"ranks": 2, "straggler": st}}) is None
    st = _phase(12.0)  # 3 ms more host work on rank 1: that much off the step, not the 8 ms it is late
    assert st["host_more_ns"] == pytest.approx(3 * MS) and st["replay_ns"] - st["whatif_ns"] == pytest.approx(
        3 * MS, rel=0.01
    )


def test_host_busy_leaves_out_the_waits_in_synchronising_calls_and_held_launches():
    api = [
        {"name": "cudaLaunchKernel", "start": 1e6, "dur": 5e3, "end": 1e6 + 5e3, "correlation": 1, "tid": 1},
        {"name": "cudaLaunchKernel", "start": 2e6, "dur": 5e3, "end": 2e6 + 5e3, "correlation": 2, "tid": 1},
        {
            "name": "cudaLaunchKernel",
            "start": 3e6,
            "dur": 1.005e6,
            "end": 4.005e6,
            "correlation": 3,
            "tid": 1,
        },
        {"name": "cudaStreamSynchronize", "start": 5e6, "dur": 2e6, "end": 7e6, "correlation": 4, "tid": 1},
    ]
    tr = _trace()
    tr = Trace(**{**tr.__dict__, "api": _df(api, ["name", "start", "dur", "end", "correlation", "tid"])})
    # 10 ms span: 2 ms synchronising, the held launch's 1 ms beyond the median launch (5 us)
    assert comm.host_busy(tr, [(0.0, 10e6)]) == [pytest.approx(7e6)]
