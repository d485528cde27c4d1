"""Issue 38, the re-run probe's gap 4: no resource limit inside the sandbox (RLIMIT_NPROC 96k, FSIZE and
CORE unlimited). Now a confined job has a task limit (a pids cgroup of its own where one can be made,
else RLIMIT_NPROC for another user than root), a file-size limit and no core dump
(kprof_mcp.sandbox.limits). The fork bomb here is bounded by itself (200 forks of ``sleep``) and its
limit is small, so that it is safe on a 2-core machine whatever the code does."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kprof_mcp import sandbox
from kprof_mcp.engine import Config, Engine, KprofError
from kprof_mcp.sandbox import limits

ROOT = Path(__file__).resolve().parents[2]
needs_landlock = pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")
needs_task_limit = pytest.mark.skipif(limits.task_limit_kind() == "none", reason="root without a pids cgroup")

BOMB = """
import json, os, resource, sys
forked, error = 0, None
for _ in range(200):
    try:
        pid = os.fork()
    except OSError as e:
        error = type(e).__name__
        break
    if pid == 0:
        os.execv("/bin/sleep", ["sleep", "30"])
    forked += 1
big = None
try:
    with open(os.path.join(sys.argv[1], "big.bin"), "wb") as f:
        f.write(b"x" * (3 << 20))
    big = "done"
except OSError as e:
    big = type(e).__name__
json.dump({"forked": forked, "error": error, "big": big, "cgroup": open("/proc/self/cgroup").read(),
           "core": resource.getrlimit(resource.RLIMIT_CORE)}, open(os.path.join(sys.argv[1], "r.json"), "w"))
"""


def _job_cgroups() -> list[Path]:
    parent = limits._pids_parent()
    return sorted(parent.glob("kprof-job-*")) if parent is not None else []


def _own_job_cgroup(proc_self_cgroup: str) -> Path | None:
    """The job's own cgroup, from its /proc/self/cgroup (a kprof-job-<supervisor pid> directory beside those
    of the jobs of other tests and other kprof processes on the machine, which are not this test's)."""
    parent = limits._pids_parent()
    names = {
        part
        for line in proc_self_cgroup.splitlines()
        for part in line.split("/")
        if part.startswith("kprof-job-")
    }
    return parent / names.pop() if parent is not None and len(names) == 1 else None


@needs_landlock
@needs_task_limit
def test_a_fork_bomb_stops_at_the_jobs_task_limit_and_files_at_their_size_limit(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    policy = sandbox.command_policy(tmp_path, work, tmp_path / "out" / "event" / "runs", work / "tmp")
    policy.max_tasks, policy.max_file_bytes = 40, 1 << 20
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    before = _job_cgroups()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cp = subprocess.run(
        sandbox.wrap(pf, [sys.executable, "-c", BOMB, str(work)]), env=env, cwd=work, timeout=120
    )
    assert cp.returncode == 0
    r = json.loads((work / "r.json").read_text())
    assert r["error"] == "BlockingIOError" and 0 < r["forked"] < 40, r  # EAGAIN at the limit
    assert r["big"] == "OSError" and (work / "big.bin").stat().st_size == 1 << 20, r  # EFBIG past 1 MiB
    assert r["core"] == [0, 0]
    own = _own_job_cgroup(r["cgroup"])
    assert own is not None and own not in before
    assert not own.exists()  # the job's cgroup went with it


@needs_landlock
def test_a_commands_policy_carries_the_limits(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    p = sandbox.command_policy(ws, ws, ws / "out" / "event" / "command", tmp_path / "tmp")
    k = sandbox.kernel_policy(sandbox.KernelScope(ws, ws / "out"), tmp_path / "jobs")
    for policy in (p, k):
        assert policy.max_tasks == limits.max_tasks() >= 1024
        assert policy.max_file_bytes >= limits.GIB
        assert sandbox.Policy.from_json(policy.to_json()) == policy


def test_max_tasks_is_the_operators_when_set(monkeypatch):
    monkeypatch.setenv("KPROF_JOB_MAX_TASKS", "77")
    assert limits.max_tasks() == 77
    monkeypatch.setenv("KPROF_JOB_MAX_TASKS", "x")
    assert 1024 <= limits.max_tasks() <= 16384


@needs_landlock
def test_a_profiled_command_sees_its_limits(tmp_path):
    ws = tmp_path / "ws"
    (ws / "results").mkdir(parents=True)
    (ws / "lim.py").write_text(
        textwrap.dedent(
            """
            import json, resource
            lim = {n: resource.getrlimit(getattr(resource, n)) for n in ("RLIMIT_FSIZE", "RLIMIT_CORE")}
            json.dump({**lim, "cgroup": open("/proc/self/cgroup").read()}, open("results/lim.json", "w"))
            """
        )
    )
    before = _job_cgroups()
    engine = Engine(Config(workspace=ws, timeout_s=120, force_cpu=True, warm=False))
    try:
        with pytest.raises(KprofError, match="entered no range"):
            engine.profile_command(["python", "lim.py"], mode="event")
    finally:
        engine.close()
    lim = json.loads((ws / "results" / "lim.json").read_text())
    assert lim["RLIMIT_CORE"] == [0, 0]
    assert limits.GIB <= lim["RLIMIT_FSIZE"][0] == lim["RLIMIT_FSIZE"][1] < resource_infinity()
    own = _own_job_cgroup(lim["cgroup"])
    assert own is not None and own not in before and not own.exists()  # its job's cgroup went with it


def resource_infinity() -> int:
    import resource

    return resource.RLIM_INFINITY if resource.RLIM_INFINITY > 0 else 1 << 63
