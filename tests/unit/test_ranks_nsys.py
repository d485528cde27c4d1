"""Nsight Systems mode split by rank (issue 39), on the CPU from a recording on 2 x H100
(tests/fixtures/gpu_ranks_nccl_nsys: ``kprof run --mode nsys -- python ddp_job.py``, NVLink, NCCL 2.28.9,
torch 2.11, Nsight Systems 2025.3.1, 2026-11-26; the job: tests/fixtures/gpu_ranks_nccl/ddp_job.py, two ranks
by torch.multiprocessing.spawn, eight bf16 4096^3 GEMMs in kprof.range("step") then an all_reduce in
kprof.range("sync"), rank 1 sleeping 40 ms in its step). One report holds both processes (111 kernels
each); read back, it gives each rank its stages and names rank 1 the straggler, as event mode does
(docs/evidence/ranks/event-contract.md). A single-process report is read as before."""

import json
import shutil
from pathlib import Path

import pytest
from conftest import packed, unpacked

from kprof_mcp import render
from kprof_mcp.analysis.nsys_ranks import BY_DEVICE, BY_FIRST_CALL, rank_processes, split_stages
from kprof_mcp.models import ProfileRequest, ProfileResult
from kprof_mcp.modes import get_mode
from kprof_mcp.parsers import nsys
from kprof_mcp.parsers.kineto import KERNEL_COLUMNS
from kprof_mcp.parsers.nsys_processes import Processes, ProcessTrace, load_processes
from kprof_mcp.render.diagnosis import assess

FIX = Path(__file__).resolve().parents[1] / "fixtures"
RUN = FIX / "gpu_ranks_nccl_nsys"
MS = 1e6
SLEEP_NS = 40 * MS  # ddp_job.py's planted sleep on rank 1


@pytest.fixture(scope="module")
def sqlite(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("nsys_ranks") / "timeline.sqlite"
    with packed(RUN / "timeline.sqlite.gz") as f:
        out.write_bytes(f.read())
    return out


def test_the_report_is_split_into_its_two_kernel_launching_processes(sqlite):
    procs = load_processes(sqlite)
    assert procs is not None and procs.origin_ns == 1795688616413065916  # the session's start, epoch ns
    by_pid = {p.pid: p for p in procs.processes}
    assert sorted(by_pid) == [702, 703]  # the launcher (pid 650) and the parent (701) launched no kernel
    assert [(by_pid[p].kernels, by_pid[p].devices) for p in (702, 703)] == [(111, [0]), (111, [1])]
    for p in procs.processes:
        tr = p.trace
        assert len(tr.kernels) == 111 and list(tr.kernels.columns) == KERNEL_COLUMNS
        assert set(tr.kernels["device"]) == set(p.devices) and len(tr.memops) == 146 + 194
        names = set(tr.ranges["name"])
        assert {"step", "sync", "nccl:ncclAllReduce", "nccl:ncclCommInitRankConfig"} <= names  # NCCL's domain
        assert not any(n.startswith("ncclAllReduce") for n in names)
    # The merged trace is as before: every process's kernels, the same columns.
    merged = nsys.load_sqlite(sqlite)
    assert len(merged.kernels) == 222 and list(merged.kernels.columns) == KERNEL_COLUMNS
    assert "ncclAllReduce" in set(merged.ranges["name"]) and "pid" not in merged.ranges.columns


def test_ranks_come_from_the_cuda_devices_not_the_race_to_the_first_cuda_call(sqlite):
    procs = load_processes(sqlite)
    ranks, how = rank_processes(procs)
    assert how == BY_DEVICE and [(p.rank, p.pid, p.rank_from) for p in ranks] == [
        (0, 702, BY_DEVICE),
        (1, 703, BY_DEVICE),
    ]
    by_pid = {p.pid: p for p in procs.processes}
    # cuda:1 (rank 1: torch.cuda.set_device(rank)) called CUDA first: that order would swap the ranks.
    assert by_pid[703].first_cuda_ns < by_pid[702].first_cuda_ns - 100 * MS


def test_without_a_device_of_their_own_the_ranks_follow_the_first_cuda_call(sqlite):
    real = load_processes(sqlite).processes
    shared = [
        ProcessTrace(pid=p.pid, name=p.name, trace=p.trace, devices=[0], first_cuda_ns=t, kernels=p.kernels)
        for p, t in zip(real, (5.0, 2.0))
    ]
    ranks, how = rank_processes(Processes(shared, None))
    assert how == BY_FIRST_CALL and [p.pid for p in ranks] == [703, 702]
    assert all(p.origin_ns == 0 and p.local_rank is None for p in ranks)


def test_each_rank_has_its_stages_and_rank_1_is_the_straggler_late_by_about_its_sleep(sqlite):
    stages, by, notes, table, comm = split_stages(load_processes(sqlite), [], 1)
    assert by == "range"
    assert [(s.name, s.occurrences) for s in stages] == [
        ("rank0/step", 11),
        ("rank0/sync", 11),
        ("rank1/step", 11),
        ("rank1/sync", 11),
    ]
    assert "the ranks from the cuda device" in notes[0] and "rank 1: pid 703, cuda:1" in notes[0]
    st = comm["straggler"]
    assert (st["rank"], st["why"], st["last_pct"]) == (1, "host", 100.0)
    assert 0.8 * SLEEP_NS < st["late_ns"] < 1.2 * SLEEP_NS, st
    assert 0.8 * SLEEP_NS < st["extra_host_ns"] < 1.2 * SLEEP_NS, st
    assert comm["steps"] == 11 and comm["collectives"] == 11
    rows = {r["rank"]: r for r in table}
    assert rows[0]["wait_ns"] == pytest.approx(st["late_ns"], rel=0.05) and rows[1]["wait_ns"] == 0
    assert rows[0]["exposed_ns"] == pytest.approx(rows[0]["comm_ns"]) and rows[0]["comm_ns"] > 0.8 * SLEEP_NS
    assert 1 * MS < rows[1]["compute_ns"] < 3 * MS and rows[1]["host_ns"] > 0.8 * SLEEP_NS
    assert (rows[0]["devices"], rows[1]["devices"]) == ([0], [1])
    assert st["whatif_ns"] < 0.1 * st["replay_ns"]


def _read_back(run: Path, tmp_path: Path, sqlite: Path | None = None) -> ProfileResult:
    work = tmp_path / run.name
    shutil.copytree(run, work)
    if sqlite is not None:
        shutil.copy(sqlite, work / "timeline.sqlite")
    recorded = ProfileResult.model_validate_json((run / "result.json").read_text())
    profiler = json.loads((work / "profiler.json").read_text())
    return get_mode("nsys").read_output(ProfileRequest(**recorded.request), work, "", profiler)


def test_the_nsys_contract_names_rank_1_the_straggler(sqlite, tmp_path):
    result = _read_back(RUN, tmp_path, sqlite)
    assert [s.name for s in result.stages] == ["rank0/step", "rank0/sync", "rank1/step", "rank1/sync"]
    assert [r["rank_from"] for r in result.command["ranks"]] == [BY_DEVICE, BY_DEVICE]
    assert result.command["communication"]["straggler"]["rank"] == 1
    contract = render.render_contract(result, assessment=assess(result))
    assert "| rank1/step |" in contract and "| step |" not in contract and "ncclAllReduce" not in contract
    assert (
        "**Root cause**: Rank 1 is the straggler: the other ranks wait for it at the collectives" in contract
    )
    assert "1. Even out rank 1, the straggler: take host work out of its steps" in contract
    late = result.command["communication"]["straggler"]["late_ns"]
    assert f"{late / MS:.1f} ms per step" in contract


SINGLE = sorted({p.parent for p in (FIX / "h100_nsys").glob("*_v*/timeline.sqlite*")})  # kept as .xz


@pytest.mark.parametrize("run", SINGLE, ids=[p.name for p in SINGLE])
def test_a_single_process_report_is_not_split(run):
    assert len(SINGLE) == 4
    assert load_processes(unpacked(run / "timeline.sqlite")) is None


def test_a_single_process_command_reads_back_as_recorded(tmp_path):
    """The replay calibration's recorded command (one process, CCCL's NVTX ranges; H100): not split,
    the stages and the contract as recorded."""
    rec = FIX.parent / "calibration" / "recorded-replay" / "shape_sync"
    out = tmp_path / "bad.sqlite"
    with packed(rec / "bad.sqlite.gz") as f:
        out.write_bytes(f.read())
    assert load_processes(out) is None
    from kprof_mcp.modes.timeline import _ranks

    recorded = ProfileResult.model_validate_json((rec / "bad.result.json").read_text())
    assert _ranks(ProfileRequest(**recorded.request), out) is None
