"""Issue 38, the fourth probe's P4-5: a "ghost" — a process whose main thread ended with the raw exit
system call while another thread goes on — shows state Z in /proc, and the process-tree walk skipped
every zombie, so a job's ghost outlived the job, later jobs and the server. The walk now keeps a zombie
whose other threads still run, and kill_tree ends it."""

import os
import subprocess
import sys
import time

from kprof_mcp import lifeline

# A child that forks the ghost below itself, prints its pid, and waits.
PARENT = r"""
import ctypes, os, sys, threading, time

def beat():
    while True:
        time.sleep(0.2)

pid = os.fork()
if pid == 0:
    os.setsid()
    threading.Thread(target=beat, daemon=False).start()
    time.sleep(0.1)
    ctypes.CDLL(None).syscall(60, 0)  # SYS_exit: the main thread only
    os._exit(0)
print(pid, flush=True)
time.sleep(60)
"""


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0].decode()
    except OSError:
        return None


def test_a_ghost_below_a_job_is_found_and_killed():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        ghost = int(parent.stdout.readline())
        deadline = time.monotonic() + 10
        while _state(ghost) != "Z" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (
            _state(ghost) == "Z" and len(os.listdir(f"/proc/{ghost}/task")) > 1
        )  # a ghost: Z, a thread alive
        assert ghost in lifeline.descendants(parent.pid)
        assert lifeline.kill_tree(parent.pid) >= 1
        deadline = time.monotonic() + 10
        while os.path.exists(f"/proc/{ghost}/task") and len(os.listdir(f"/proc/{ghost}/task")) > 1:
            assert time.monotonic() < deadline, "the ghost's thread still runs"
            time.sleep(0.05)
    finally:
        parent.kill()
        parent.wait()
