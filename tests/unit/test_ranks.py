"""Issue 39, every rank recorded: the rank-side recorder (started by the generated sitecustomize in
the processes a command starts), the merge into per-rank stages and table, and its rendering. The
2-rank jobs end to end are in tests/e2e/test_ranks_e2e.py."""

import json
import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from kprof_mcp.analysis.ranks import RankProcess, rank_stages
from kprof_mcp.capture import ranks
from kprof_mcp.capture.rank_recorder import ENV_CUDA, ENV_DIR
from kprof_mcp.parsers.kineto import KERNEL_COLUMNS, Trace
from kprof_mcp.render.report import rank_section


def _trace(ranges: list[tuple[str, float, float]]) -> Trace:
    """A CPU trace with these (name, start, end) ranges on one thread."""
    rows = [{"name": n, "start": s, "dur": e - s, "end": e, "tid": 1} for n, s, e in ranges]
    empty = lambda cols: pd.DataFrame([], columns=cols)  # noqa: E731
    return Trace(
        kernels=empty(KERNEL_COLUMNS),
        memops=empty(["name", "start", "dur", "end", "kind", "stream", "bytes", "correlation"]),
        api=empty(["name", "start", "dur", "end", "correlation", "tid"]),
        ranges=pd.DataFrame(rows, columns=["name", "start", "dur", "end", "tid"]),
        cpu_ops=empty(["name", "start", "dur", "end", "tid"]),
        num_sms=None,
        device_name=None,
    )


def _steps(step_ns: float, n: int = 4) -> Trace:
    out, t = [], 0.0
    for _ in range(n):
        out.append(("step", t, t + step_ns))
        out.append(("gloo:all_reduce", t + step_ns, t + step_ns + 1e6))  # torch's own: never a stage
        t += step_ns + 2e6
    return _trace(out)


def _rank(rank: int, step_ns: float, pid: int) -> RankProcess:
    p = RankProcess.from_record(
        {"pid": pid, "status": "ok", "role": "rank", "rank": rank, "world_size": 2, "rank_from": "process group",
         "started_ns": 1, "ended_ns": 2_000_000_001}
    )  # fmt: skip
    p.trace, p.origin_ns = _steps(step_ns), 1_790_000_000_000_000_000
    return p


def test_each_rank_has_its_own_stages_and_row():
    procs = [
        _rank(1, 9e6, 102),
        _rank(0, 5e6, 101),
        RankProcess.from_record(
            {"pid": 103, "status": "ok", "role": "dataloader_worker", "env": {"rank": 0}}
        ),
        RankProcess.from_record({"pid": 104, "status": "running", "env": {"rank": 2, "world_size": 3}}),
        RankProcess.from_record({"pid": 105, "status": "ok", "role": "other"}),
    ]
    stages, table, notes = rank_stages(procs, [], use_gpu=False, warmup=1)
    assert [s.name for s in stages] == ["rank1/step", "rank0/step"]  # in the order given (collect sorts)
    assert [s.samples_ns for s in stages] == [[9e6] * 3, [5e6] * 3]  # the first step left out as warm-up
    rows = {r["pid"]: r for r in table}
    assert rows[101]["stages"] == ["rank0/step"] and rows[101]["occurrences"] == 3
    assert rows[101]["time_ns"] == 15e6 and rows[101]["wall_ns"] == 2e9 and rows[101]["origin_ns"]
    assert rows[103]["note"] == "a DataLoader worker of rank 0" and rows[103]["stages"] == []
    assert (
        rows[104]["rank"] == 2 and "left no record" in rows[104]["note"]
    )  # a rank that never wrote its file
    assert rows[105]["note"].startswith("no rank")
    text = "\n".join(notes)
    assert (
        "rank1, rank0: the first 1 occurrence(s) of ['step'] left out as warm-up" in text
    )  # one line for both
    assert "no record from rank 2 (pid 104)" in text
    assert "2 process(es) the command started were not ranks" in text


def test_include_patterns_apply_to_every_rank_and_a_rank_claimed_twice_is_told_apart_by_pid():
    procs = [_rank(0, 5e6, 201), _rank(0, 6e6, 202)]
    stages, table, notes = rank_stages(procs, ["nothing*"], use_gpu=False)
    assert stages == [] and "rank0.pid201, rank0.pid202 entered no selected range" in notes[-1]
    stages, _, _ = rank_stages(procs, ["step"], use_gpu=False)
    assert [s.name for s in stages] == ["rank0.pid201/step", "rank0.pid202/step"]


def test_rank_section_renders_the_table_with_units_scaled():
    _, table, _ = rank_stages([_rank(0, 5e6, 101)], [], use_gpu=False)
    lines = rank_section(table)
    assert lines[1] == "### Ranks (1 recorded; their stages are named rank<r>/<range>)"
    assert "| 0 | 101 | rank | step | 3 | 15.000 | 2.00 |" in "\n".join(lines)
    assert rank_section([]) == []


def test_a_network_failure_of_the_ranks_gets_the_hint():
    assert "--commands-network" in ranks.network_hint(
        "ProcessGroupGloo(...)\nRuntimeError: Cannot resolve 127.0.0.1 to a (local) address"
    )
    assert ranks.network_hint("RuntimeError: Connection refused (while reading a file)") == ""


def _python(code: str, env: dict, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_follow_sets_the_environment_chains_the_shadowed_sitecustomize_and_restores_it(tmp_path, monkeypatch):
    """A process that never imports torch leaves no record; the sitecustomize the hook shadows still
    runs; the environment and the hook directory are gone after the command."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import os\nos.environ['SHADOWED_RAN'] = '1'\n")
    monkeypatch.setenv("PYTHONPATH", str(other))
    before = dict(os.environ)
    run = tmp_path / "run"
    run.mkdir()
    with ranks.follow(run, use_cuda=False) as ranks_dir:
        env = dict(os.environ)
        hook = env["PYTHONPATH"].split(os.pathsep)[0]
        assert (
            env[ENV_DIR] == str(ranks_dir) and env[ENV_CUDA] == "0" and env["PYTHONPATH"].endswith(str(other))
        )
        out = _python(
            "import os, sys; print(os.environ.get('SHADOWED_RAN'), 'kprof_mcp.capture.rank_recorder' in sys.modules)",
            env,
            tmp_path,
        )
        assert out.returncode == 0 and out.stdout.split() == ["1", "True"], out.stderr
        assert "Error in sitecustomize" not in out.stderr and out.stderr == ""
    assert dict(os.environ) == before and not os.path.exists(hook)
    assert list(ranks_dir.iterdir()) == []  # no torch imported: nothing recorded


@pytest.mark.parametrize("rank_env", [True, False])
def test_a_process_that_imports_torch_records_itself(tmp_path, rank_env):
    """With RANK in its environment (torchrun's workers) it is a rank: its ranges come back in its
    trace, its rank from the environment. Without, it is 'other' and exports no trace."""
    pytest.importorskip("torch")
    run = tmp_path / "run"
    run.mkdir()
    with ranks.follow(run, use_cuda=False) as ranks_dir:
        env = dict(os.environ)
        if rank_env:
            env.update(RANK="3", WORLD_SIZE="4", LOCAL_RANK="1")
        out = _python(
            """
            import torch, kprof
            for _ in range(3):
                with kprof.range("step"):
                    torch.ones(8) + 1
            """,
            env,
            tmp_path,
        )
    assert out.returncode == 0, out.stderr
    procs = ranks.collect(ranks_dir)
    assert len(procs) == 1, procs
    p = procs[0]
    if rank_env:
        assert (p.role, p.rank, p.world_size, p.local_rank, p.rank_from) == ("rank", 3, 4, 1, "environment")
        assert p.status == "ok" and p.trace is not None and p.origin_ns
        assert list(p.trace.ranges["name"]).count("step") == 3
        stages, table, _ = rank_stages(procs, [], use_gpu=False)
        assert [s.name for s in stages] == ["rank3/step"] and table[0]["occurrences"] == 2
    else:
        assert (p.role, p.status, p.trace) == ("other", "ok", None)
        assert not list(ranks_dir.glob("*.trace.json"))


def test_a_rank_that_ends_without_exit_handlers_is_named(tmp_path):
    """os._exit (or a kill): the process's 'running' record stays, with its rank from the environment."""
    pytest.importorskip("torch")
    run = tmp_path / "run"
    run.mkdir()
    with ranks.follow(run, use_cuda=False) as ranks_dir:
        env = dict(os.environ, RANK="1", WORLD_SIZE="2")
        out = _python("import os, torch\nos._exit(0)\n", env, tmp_path)
    assert out.returncode == 0, out.stderr
    (p,) = ranks.collect(ranks_dir)
    assert (p.status, p.rank, p.trace) == ("running", 1, None)
    _, table, notes = rank_stages([p], [], use_gpu=False)
    assert "no record from rank 1" in notes[-1] and "os._exit" in table[0]["note"]
    rec = json.loads(next(ranks_dir.glob("*.json")).read_text())
    assert rec["env"] == {"rank": 1, "world_size": 2}


def test_a_dataloader_worker_is_never_a_rank(tmp_path):
    """A spawned DataLoader worker inherits its rank's RANK: it is named as the worker, not a rank."""
    pytest.importorskip("torch")
    (tmp_path / "dl.py").write_text(
        "import torch, kprof\nfrom torch.utils.data import DataLoader\n"
        "if __name__ == '__main__':\n"
        "    dl = DataLoader(list(range(8)), batch_size=4, num_workers=1, multiprocessing_context='spawn')\n"
        "    for b in dl:\n"
        "        with kprof.range('step'):\n"
        "            b + 1\n"
    )
    run = tmp_path / "run"
    run.mkdir()
    with ranks.follow(run, use_cuda=False) as ranks_dir:
        env = dict(os.environ, RANK="0", WORLD_SIZE="1")
        out = subprocess.run(
            [sys.executable, "dl.py"], env=env, cwd=tmp_path, capture_output=True, timeout=120
        )
    assert out.returncode == 0, out.stderr[-2000:]
    procs = ranks.collect(ranks_dir)
    assert sorted((p.role, p.rank) for p in procs) == [("dataloader_worker", None), ("rank", 0)]
    stages, table, _ = rank_stages(procs, [], use_gpu=False)
    assert [s.name for s in stages] == ["rank0/step"]
    assert [r["note"] for r in table if r["role"] != "rank"] == ["a DataLoader worker of rank 0"]
