"""Issue 38, the ninth probe's P9-2 (docs/evidence/sandbox/probe-2026-11-26-ninth.md): a command spread ~8 GB over
many 70 MiB processes in a 4 GiB cgroup and the OOM killer took the *server*. A job may lower its processes'
``oom_score_adj`` back to 0, level with the server (tests/unit/test_probe9_oom.py), so only a limit the kernel keeps
closes it: every confined process runs in a memory cgroup of its job's own below a shared ``kprof-jobs`` one
(kprof_mcp.sandbox.memory), and the OOM killer then chooses among the jobs' processes only.

Each test starts its supervisor in a memory cgroup of the test's own (so its small limit is not the shared limit of
other tests' jobs); the stand-in for the server is a process beside the supervisor in that cgroup, which must live."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kprof_mcp import sandbox
from kprof_mcp.sandbox import memory

MIB = 1 << 20

needs_memory_cgroup = pytest.mark.skipif(
    memory.limit_kind() == "none", reason="no writable memory cgroup (not root, or a read-only hierarchy)"
)

# Spread like P9-2: many processes each smaller than the stand-in server, all lowered back to score 0.
SPREAD = textwrap.dedent(
    """
    import os, subprocess, sys
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("0")  # the deliberate job: level with the server
    code = "import time; b = bytearray(40 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep(20)"
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(int(sys.argv[1]))]
    print("cgroup", open("/proc/self/cgroup").read().replace(chr(10), " "), flush=True)
    for p in procs:
        p.wait()
    """
)


@pytest.fixture
def own_cgroup():
    """A memory cgroup of this test's own (below this process's), removed after."""
    parent, v2 = memory._memory_cgroup()
    d = parent / f"kprof-test-{os.getpid()}-{os.urandom(3).hex()}"
    d.mkdir()
    yield d
    for sub in sorted(d.rglob("*"), key=lambda p: -len(p.parts)):
        if sub.is_dir():
            try:
                sub.rmdir()
            except OSError:
                pass
    for _ in range(40):
        try:
            d.rmdir()
            break
        except OSError:
            import time

            time.sleep(0.05)


def _in(cgroup: Path):
    def enter():
        (cgroup / "cgroup.procs").write_text(str(os.getpid()))

    return enter


@needs_memory_cgroup
@pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")
def test_memory_spread_over_a_jobs_processes_is_killed_inside_the_jobs_cgroup(tmp_path, own_cgroup):
    work = tmp_path / "w"
    work.mkdir()
    limit = 320 * MIB  # the job's own: 160 MiB, where 8 processes of 40 MiB (+ Python) do not fit
    policy = sandbox.command_policy(tmp_path, work, tmp_path / "out" / "event" / "runs", work / "tmp")
    assert policy.max_memory == memory.max_memory() > 0  # the policy carries the jobs' limit
    policy.max_memory = limit
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    # the stand-in for the server: 100 MiB, larger than any of the job's processes, same score (0)
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; b = bytearray(100 << 20); b[::4096] = b'x' * len(b[::4096]); "
            "print('up', flush=True); time.sleep(60)",
        ],
        preexec_fn=_in(own_cgroup),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout.readline().strip() == "up"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        cp = subprocess.run(
            sandbox.wrap(pf, [sys.executable, "-c", SPREAD, "8"]),
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=_in(own_cgroup),
        )
        assert server.poll() is None, "the stand-in for the server was killed"
        assert (
            f"/{memory.SHARED}/kprof-job-" in cp.stdout
        )  # the job ran in its own cgroup below the shared one
        assert "memory limit" in cp.stderr and "killed" in cp.stderr, cp.stderr  # and was told why
        shared = own_cgroup / memory.SHARED
        assert shared.is_dir() and not list(shared.glob("kprof-job-*"))  # its cgroup went with it
        assert memory._read_limit(shared, v2=memory.unified()) == limit
        assert memory.per_job(limit) == limit // 2  # the job's own: room left for the others (P10-4)
    finally:
        server.kill()
        server.wait()


def test_the_limit_is_the_operators_when_set_and_leaves_the_server_a_reserve(monkeypatch):
    monkeypatch.setenv("KPROF_JOB_MAX_MEMORY", str(3 << 30))
    assert memory.max_memory() == 3 << 30
    monkeypatch.setenv("KPROF_JOB_MAX_MEMORY", "0")
    assert memory.max_memory() == 0  # no limit: make() makes none
    assert memory.make(0) is None
    monkeypatch.delenv("KPROF_JOB_MAX_MEMORY")
    total = memory.available_memory()
    assert total // 2 <= memory.max_memory() <= total - min(total // 2, 1 << 30)
    assert total <= os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def test_a_policy_without_a_limit_reads_back_as_none():
    p = sandbox.Policy.from_json('{"read": [], "write": []}')
    assert p.max_memory == 0
