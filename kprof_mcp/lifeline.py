"""The lifeline: no child process outlives the process that started it, however that one ends.

The parent makes one pipe per process, on first use, and keeps its write end to itself: the
write end is non-inheritable (so no ``exec``'d program gets it) and is closed in a forked copy of
the parent (so no forked helper holds it either). Every child is handed the read end
(``pass_fds``) and the variable :data:`ENV` naming it. The child's first act
(:func:`watch`) is to start a daemon thread that blocks reading that pipe. Nobody ever writes to
it, so the read returns only at end of file: when the parent is gone, by exit, an exception,
SIGTERM or ``kill -9`` alike, since the kernel closes a dead process's descriptors. The thread
then kills the child's descendants (:func:`kill_tree`: those that started a session of their own
too) and its whole process group, which takes with it a profiler prefix (``ncu``, ``nsys``) that
shares the group. A user's command runs below a subreaper (:mod:`kprof_mcp.sandbox`), so none of
its processes can leave that subtree.

A child of a child gets its own lifeline, to the process that started it. ``PR_SET_PDEATHSIG``
is no substitute: it fires when the parent *thread* exits, and children are started from job
threads.
"""

from __future__ import annotations

import os
import signal
import stat
import threading

ENV = "KPROF_LIFELINE"  # "<fd>:<the pipe's inode>" in a child's environment
# A command (JSON argument vector) the orphaned child starts, detached, before killing its group:
# a profiler that locked the GPU's clocks dies by SIGKILL without restoring them, so the child
# leaves behind a process that resets them once the group is gone.
THEN_ENV = "KPROF_LIFELINE_THEN"

_lock = threading.Lock()
_pipe: tuple[int, int] | None = None  # (read end, write end) of this process's lifeline


def _forget_in_fork() -> None:
    """In a forked copy of the parent: drop the parent's write end (the copy must not keep the
    parent's children alive); the copy makes its own lifeline if it starts children. The lock is
    new: another thread of the parent may have held it at the fork."""
    global _lock, _pipe
    _lock = threading.Lock()
    if _pipe is not None:
        os.close(_pipe[1])
        _pipe = None


os.register_at_fork(after_in_child=_forget_in_fork)


def _read_end() -> int:
    """This process's lifeline (read end), made on first use; os.pipe's ends are non-inheritable."""
    global _pipe
    with _lock:
        if _pipe is None:
            _pipe = os.pipe()
        return _pipe[0]


def for_child(env: dict[str, str], then: list[str] | None = None) -> tuple[dict[str, str], tuple[int, ...]]:
    """The environment and the ``pass_fds`` that hand this process's lifeline to a child started
    with ``start_new_session=True`` (it kills its process group when this process is gone, after
    starting ``then``, detached, when given: e.g. ``nvidia-smi -rgc`` behind a clock-locking profiler)."""
    import json

    fd = _read_end()
    extra = {THEN_ENV: json.dumps(then)} if then else {}
    return {**env, ENV: f"{fd}:{os.fstat(fd).st_ino}", **extra}, (fd,)


def watch() -> None:
    """Child side, first thing at start-up: when started with a lifeline, wait on it in a daemon
    thread and kill this process group once the parent is gone. The variable is removed, so the
    processes this child starts do not take it for theirs. A lifeline that did not arrive (a
    profiler that closed the descriptor, or something else now at that number) means no watch,
    never a crash or a read of someone else's descriptor."""
    fd = _received(os.environ.pop(ENV, ""))
    then = os.environ.pop(THEN_ENV, "")
    if fd is not None:
        os.set_inheritable(fd, False)
        threading.Thread(
            target=_kill_group_at_eof, args=(fd, then), daemon=True, name="kprof-lifeline"
        ).start()


def _received(spec: str) -> int | None:
    """The descriptor ``spec`` names if it is still the parent's pipe (same inode), else None."""
    try:
        fd, inode = (int(part) for part in spec.split(":"))
        st = os.fstat(fd)
    except (ValueError, OSError):
        return None
    return fd if stat.S_ISFIFO(st.st_mode) and st.st_ino == inode else None


def _kill_group_at_eof(fd: int, then: str = "") -> None:
    try:
        while os.read(fd, 1):  # nobody writes: this returns b"" only when the parent is gone
            pass
    except OSError:
        return  # the descriptor was closed under us (by the child's own code): nothing to watch
    kill_tree(os.getpid())  # descendants in other sessions too (all of them below a subreaper)
    if then:  # after the tree is gone (the detached helper is a descendant too), before the group
        _start_after_group_dies(then)
    os.killpg(os.getpgrp(), signal.SIGKILL)


def _start_after_group_dies(then: str) -> None:
    """Start the JSON argument vector ``then`` in a new session, a second from now (after this
    group is killed); best effort: the group dies whatever happens here."""
    import json
    import subprocess

    from .protocol import python_argv

    try:
        argv = [str(a) for a in json.loads(then)]
        subprocess.Popen(
            [
                *python_argv(
                    code="import subprocess, sys, time; time.sleep(1); subprocess.run(sys.argv[1:], timeout=30)"
                ),
                *argv,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except Exception:  # noqa: BLE001 — never keep the group alive for this
        pass


# ------------------------------------------------------------------ a whole subtree
def _parents() -> dict[int, int]:
    """Every live process' parent, from ``/proc``: a zombie is left out unless other threads of it still
    run (issue 38, the fourth probe's P5: a main thread that ended with the raw exit system call while
    another thread went on showed ``Z`` and outlived its job, later jobs and the server)."""
    out: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rpartition(b")")[2].split()
        except OSError:
            continue  # gone meanwhile
        if len(fields) > 1 and (fields[0] != b"Z" or _threads_left(name)):
            out[int(name)] = int(fields[1])
    return out


def _threads_left(pid: str) -> bool:
    """Whether a zombie thread-group leader still has running threads."""
    try:
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


def descendants(root: int) -> list[int]:
    """The live processes below ``root`` (children first found, grandchildren after)."""
    children: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found


def kill_tree(root: int, rounds: int = 50, keep: frozenset[int] | set[int] = frozenset()) -> int:
    """SIGKILL every descendant of ``root`` (not ``root`` itself, nor the pids in ``keep``), those that
    left its session or group (``setsid``) included; returns how many were killed. Each round stops what it finds
    (a stopped process cannot fork) until a round finds nothing new, then kills them all; a
    process whose parent dies meanwhile is re-parented to the nearest subreaper (the sandbox's
    supervisor, :mod:`kprof_mcp.sandbox`) and still found below ``root`` while that one lives.
    Orphans this process must reap (when it is the subreaper) are reaped here."""
    seen: set[int] = set()
    for _ in range(rounds):
        new = [p for p in descendants(root) if p not in seen and p not in keep]
        if not new:
            break
        for p in new:
            try:
                os.kill(p, signal.SIGSTOP)
            except (ProcessLookupError, PermissionError):
                pass
        seen.update(new)
    for p in seen:
        try:
            os.kill(p, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if root == os.getpid():
        _reap()
    return len(seen)


def _reap() -> None:
    """Collect this process' dead children that nobody waits for (orphans handed to a subreaper)."""
    import time

    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if not descendants(os.getpid()):
                return
            time.sleep(0.01)
