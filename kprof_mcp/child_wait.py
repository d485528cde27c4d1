"""Waiting for a child process and killing what it leaves (kprof_mcp.runner's children).

A child runs in a process group of its own (``start_new_session``) whose id is its pid. Once the child
is reaped its pid is free for the kernel to give to a new process, which may be a group leader of its
own — another job's child — so a ``killpg`` by that id after the reaping could kill the wrong group
(issue 38: the runner's kill after reaping, a pid-reuse window). The child's exit is therefore watched
without reaping it (a pidfd; ``waitid(WNOWAIT)`` without one), its group killed while the zombie keeps
the id reserved, and only then is it reaped."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from . import lifeline


def _kill_group(proc: subprocess.Popen, wait_s: float | None = None) -> None:
    """Kill the child's descendants (those in sessions of their own too) and its process group while
    it is unreaped (its id still its own), then reap it (waiting up to ``wait_s``; None: as long as it
    takes)."""
    if proc.returncode is None:
        lifeline.kill_tree(proc.pid)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        pass


def _exit_waiter(proc: subprocess.Popen):
    """A function ``wait(timeout_s) -> bool`` that says whether the child has exited *without reaping
    it*: its pid, which is also its process group's id, stays its own until :func:`_reap`, so the
    group's stragglers are killed by that id with no chance that a new process got it meanwhile (a
    pidfd polled; ``waitid(WNOWAIT)`` where the kernel has none)."""
    import select

    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        fd = -1
    if fd >= 0:
        poller = select.poll()
        poller.register(fd, select.POLLIN)

        def by_pidfd(timeout_s: float) -> bool:
            return bool(poller.poll(timeout_s * 1e3))

        by_pidfd.fd = fd  # closed by _reap
        return by_pidfd

    def by_waitid(timeout_s: float) -> bool:
        end = time.monotonic() + timeout_s
        while not exited(proc):
            if time.monotonic() >= end:
                return False
            time.sleep(0.01)
        return True

    return by_waitid


def _reap(proc: subprocess.Popen, waiter) -> None:
    """The exited child's group killed while its pid is still reserved (the zombie), then reaped;
    the waiter's pidfd closed. Nothing killed once it was reaped (its id may be another's by then)."""
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # grandchildren the kernel may have started die with it
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    fd = getattr(waiter, "fd", -1)
    if fd >= 0:
        os.close(fd)


def _wait(proc: subprocess.Popen, timeout_s: float, control, waiter=None) -> str | None:
    """Wait for the child; ``"timeout"`` or ``"cancelled"`` when it had to be stopped (group killed).
    With ``waiter`` (:func:`_exit_waiter`) an exited child is left unreaped for :func:`_reap`."""
    deadline = time.monotonic() + timeout_s
    while True:
        if waiter is not None:
            if waiter(0.1):
                return None
        else:
            try:
                proc.wait(timeout=0.1)
                return None
            except subprocess.TimeoutExpired:
                pass
        if control is not None and control.cancelled:
            _kill_group(proc)
            return "cancelled"
        if time.monotonic() >= deadline:
            _kill_group(proc)
            return "timeout"


def exited(proc: subprocess.Popen) -> bool:
    """Whether the child has exited, without reaping it (``Popen.poll`` would: its group's id then free)."""
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None
    except ChildProcessError:
        return proc.poll() is not None


def end_group(proc: subprocess.Popen, wait_s: float = 5.0) -> None:
    """Wait up to ``wait_s`` for the child to exit (unreaped), kill its group while its id is still its
    own — with its descendants in sessions of their own while it is alive —, then reap it."""
    if proc.returncode is None:
        waiter = _exit_waiter(proc)
        if not waiter(wait_s):
            lifeline.kill_tree(proc.pid)
        _reap(proc, waiter)
