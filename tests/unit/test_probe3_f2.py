"""Issue 38, the fresh probe's F2: a kernel package whose import double-forks a ``setsid`` process left
it alive in the warm worker after profile_kernel answered (it lived on, confined, across later jobs of
other packages). The worker is now its own subreaper and ends, after each job, every process the job
started that is still alive. Through the engine's real warm workers, on the CPU."""

import os
import time
import uuid
from pathlib import Path

from conftest import FIXTURES

from kprof_mcp.engine import Config, Engine

STAY = """
import os as _o, threading as _t, time as _ti


def _stay():
    if _o.fork() == 0:
        _o.setsid()
        if _o.fork() == 0:
            _o.execv("/bin/sleep", ["sleep", {arg!r}])
        _o._exit(0)


_stay()
_t.Thread(target=lambda: _ti.sleep(600), daemon=True).start()
"""


def _sleepers(arg: str) -> list[int]:
    found = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if (p / "cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", arg.encode()]:
                    found.append(int(p.name))
            except OSError:
                pass
    return found


def test_a_process_a_package_leaves_in_the_warm_worker_is_ended_with_its_job(tmp_path):
    ws = tmp_path / "ws"
    (ws / "kern").mkdir(parents=True)
    arg = f"301.{uuid.uuid4().int % 10**9}"
    scale = (FIXTURES / "user_kernels" / "scale.py").read_text()
    (ws / "kern" / "stay.py").write_text(scale + "\n" + STAY.format(arg=arg))
    eng = Engine(Config(workspace=ws, timeout_s=600, warm=True, force_cpu=True))
    left: list[int] = []
    try:
        o = eng.profile("kern/stay.py", params={"n": 256}, mode="event")
        assert o.profile_dir.is_dir()
        time.sleep(0.5)
        left = _sleepers(arg)
        assert left == [], f"the package's setsid sleep outlived its job: {left}"
        # the job's worker ended with it (one job per confined worker, issue 38's fifth probe), as a
        # worker does after a clean job, not as after a failure; the next job runs in a fresh one
        (ran,) = [r for r in eng.pool.status()["retired"] if r["key"] != "describe"]
        assert "one job per confined worker" in ran["why"] and ran["served"] == 1
        eng.profile("vector_add", params={"n": 1024}, mode="event")
        jobs = [r for r in eng.pool.status()["retired"] if r["key"] != "describe"]
        assert len(jobs) == 2 and jobs[1]["pid"] != ran["pid"] and "one job" in jobs[1]["why"]
    finally:
        eng.close()
        for pid in left + _sleepers(arg):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
