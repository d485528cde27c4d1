"""Issue 38, left by the ninth probe: the runner killed a finished child's process group by the child's pid *after*
reaping it, when the pid was free for the kernel to hand to a new process, which may lead a group of its own
(another job's child): a ``killpg`` in that window kills the wrong group. Now the child's exit is watched without
reaping it (kprof_mcp.child_wait), its group is killed while the zombie keeps the id reserved, and only then is it
reaped; a worker's liveness check no longer reaps it either. Each ``killpg`` here is checked to name an unreaped
child."""

import os
import signal
import subprocess
import time

import pytest

from kprof_mcp import child_wait

LEAVES_A_SLEEPER = "sleep 60 & echo $!; exit 0"  # a grandchild left in the child's group


def _unreaped(pid: int) -> bool:
    """Still this process's child, alive or a zombie (not reaped: its id reserved)."""
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
        return True
    except ChildProcessError:
        return False


def _gone(pid: int, within_s: float = 5.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            with open(f"/proc/{pid}/stat") as f:  # a zombie (reaped by its new parent soon) counts as gone
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def killpg_spy(monkeypatch):
    calls = []
    real = os.killpg

    def spy(pgid, sig):
        calls.append((pgid, _unreaped(pgid)))
        return real(pgid, sig)

    monkeypatch.setattr(child_wait.os, "killpg", spy)
    return calls


def test_an_exited_child_is_left_unreaped_until_its_group_is_killed(killpg_spy):
    proc = subprocess.Popen(
        ["sh", "-c", LEAVES_A_SLEEPER], stdout=subprocess.PIPE, start_new_session=True, text=True
    )
    sleeper = int(proc.stdout.readline())
    waiter = child_wait._exit_waiter(proc)
    assert child_wait._wait(proc, 10, None, waiter) is None
    assert proc.returncode is None and _unreaped(proc.pid)  # exited, its id still reserved
    assert child_wait.exited(proc) and proc.returncode is None  # asking does not reap it either
    child_wait._reap(proc, waiter)
    assert proc.returncode == 0
    assert killpg_spy == [(proc.pid, True)]  # the group killed while the child was a zombie
    assert _gone(sleeper)


def test_a_timed_out_child_is_killed_with_its_group_and_nothing_after_the_reaping(killpg_spy):
    class Control:
        cancelled = False

    proc = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 60"], start_new_session=True)
    waiter = child_wait._exit_waiter(proc)
    assert child_wait._wait(proc, 0.3, Control(), waiter) == "timeout"
    assert proc.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL)  # sh may see its sleep killed first
    child_wait._reap(proc, waiter)  # reaped by the kill already: no second killpg by a free id
    assert killpg_spy and all(unreaped for _, unreaped in killpg_spy)


def test_end_group_kills_what_a_finished_worker_left(killpg_spy):
    proc = subprocess.Popen(
        ["sh", "-c", LEAVES_A_SLEEPER], stdout=subprocess.PIPE, start_new_session=True, text=True
    )
    sleeper = int(proc.stdout.readline())
    child_wait.end_group(proc, 10)
    assert proc.returncode == 0 and killpg_spy == [(proc.pid, True)]
    assert _gone(sleeper)
