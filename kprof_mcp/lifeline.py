"""The lifeline: no child process outlives the process that started it, however that one ends.

The parent makes one *pidfd* of itself (``pidfd_open(getpid())``), on first use, and hands it to every
child (``pass_fds``) with the variable :data:`ENV` naming it. The child's first act (:func:`watch`) is
to start a daemon thread that polls that descriptor: it becomes readable only when the parent process
has exited, by exit, an exception, SIGTERM or ``kill -9`` alike. The thread then kills the child's
descendants (:func:`kill_tree`: those that started a session of their own too) and its whole process
group, which takes with it a profiler prefix (``ncu``, ``nsys``) that shares the group. A user's
command runs below a subreaper (:mod:`kprof_mcp.sandbox`), so none of its processes can leave that
subtree.

A pidfd refers to the parent's life, nothing a child can hold or change: issue 38's eighth probe (P8-1)
reopened the pipe that used to be the lifeline for *writing* through ``/proc/self/fd/N`` and kept that
write end in a detached sleeper, so no child ever read end of file and the sleeper, the warm worker
and its supervisor outlived a killed server. A reopened pidfd is one more reference to the same
process; closing, sharing or shutting it affects no other holder (a shared socket's ``shutdown`` would
have told every child the server was gone). Where ``pidfd_open`` is missing (Linux before 5.3) the
pipe is the fallback: a pipe whose only write end the parent holds (non-inheritable, closed in a forked
copy), read to end of file.

A child of a child gets its own lifeline, to the process that started it: a forked copy of the parent
drops the inherited one and makes its own on first use. ``PR_SET_PDEATHSIG`` is no substitute: it fires
when the parent *thread* exits, and children are started from job threads.
"""

from __future__ import annotations

import os
import signal
import stat
import threading

ENV = "KPROF_LIFELINE"  # "pidfd|pipe:<fd>:<its inode>" in a child's environment
# A command (JSON argument vector) the orphaned child starts, detached, before killing its group:
# a profiler that locked the GPU's clocks dies by SIGKILL without restoring them, so the child
# leaves behind a process that resets them once the group is gone.
THEN_ENV = "KPROF_LIFELINE_THEN"

_lock = threading.Lock()
# This process's lifeline: ("pidfd", its pidfd) or ("pipe", read end, write end); non-inheritable.
_mine: tuple | None = None


def _forget_in_fork() -> None:
    """In a forked copy of the parent: drop the parent's lifeline (a pidfd of the parent would tell
    the copy's children of the parent's end, not the copy's; a pipe's write end would keep the
    parent's children alive); the copy makes its own if it starts children. The lock is new: another
    thread of the parent may have held it at the fork."""
    global _lock, _mine
    _lock = threading.Lock()
    if _mine is not None:
        for fd in _mine[1:]:
            os.close(fd)
        _mine = None


os.register_at_fork(after_in_child=_forget_in_fork)


def _make() -> tuple:
    try:
        return ("pidfd", os.pidfd_open(os.getpid()))  # non-inheritable, as os.pipe's ends
    except (AttributeError, OSError):  # no pidfd_open (Linux < 5.3): the pipe
        return ("pipe", *os.pipe())


def _handed() -> tuple[str, int]:
    """What this process hands its children: its lifeline's kind and descriptor, made on first use."""
    global _mine
    with _lock:
        if _mine is None:
            _mine = _make()
        return _mine[0], _mine[1]


def for_child(env: dict[str, str], then: list[str] | None = None) -> tuple[dict[str, str], tuple[int, ...]]:
    """The environment and the ``pass_fds`` that hand this process's lifeline to a child started
    with ``start_new_session=True`` (it kills its process group when this process is gone, after
    starting ``then``, detached, when given: e.g. ``nvidia-smi -rgc`` behind a clock-locking profiler)."""
    import json

    kind, fd = _handed()
    extra = {THEN_ENV: json.dumps(then)} if then else {}
    return {**env, ENV: f"{kind}:{fd}:{os.fstat(fd).st_ino}", **extra}, (fd,)


def take() -> tuple[str, int, str] | None:
    """Child side: the lifeline this process was started with (kind, descriptor, ``then``), or None.
    The variables are removed and the descriptor made non-inheritable, so the processes this child
    starts (``exec``'d after a fork) do not get it: a sandbox supervisor takes it before it forks the
    confined process, which then holds nothing of the server's (the supervisor watches for it)."""
    got = _received(os.environ.pop(ENV, ""))
    then = os.environ.pop(THEN_ENV, "")
    if got is None:
        return None
    os.set_inheritable(got[1], False)
    return (*got, then)


def watch(taken: tuple[str, int, str] | None = None) -> None:
    """Child side, first thing at start-up: when started with a lifeline (or given the one
    :func:`take` took), wait on it in a daemon thread and kill this process group once the parent is
    gone. A lifeline that did not arrive (a profiler that closed the descriptor, or something else
    now at that number) means no watch, never a crash or a read of someone else's descriptor."""
    if taken is None:
        taken = take()
    if taken is not None:
        threading.Thread(target=_kill_group_when_gone, args=taken, daemon=True, name="kprof-lifeline").start()


def _received(spec: str) -> tuple[str, int] | None:
    """The kind and descriptor ``spec`` names if the descriptor is still the parent's lifeline (same
    inode; a pidfd's ``fdinfo`` names a process, a pipe is a FIFO), else None."""
    try:
        kind, fd_text, inode_text = spec.split(":")
        fd, inode = int(fd_text), int(inode_text)
        st = os.fstat(fd)
    except (ValueError, OSError):
        return None
    if st.st_ino != inode:
        return None
    if kind == "pipe":
        return (kind, fd) if stat.S_ISFIFO(st.st_mode) else None
    return (kind, fd) if kind == "pidfd" and _is_pidfd(fd) else None


def _is_pidfd(fd: int) -> bool:
    """Whether ``fd`` is a pidfd (its ``fdinfo`` has a ``Pid:`` line); a ``/proc`` that cannot be read
    leaves the inode's match as the only check."""
    try:
        with open(f"/proc/self/fdinfo/{fd}", "rb") as f:
            return b"\nPid:" in b"\n" + f.read()
    except OSError:
        return True


def _wait_gone(kind: str, fd: int) -> bool:
    """Block until the parent is gone (True), or the descriptor was closed under us by the child's own
    code (False: nothing to watch)."""
    import select

    try:
        if kind == "pidfd":
            poll = select.poll()
            poll.register(fd, select.POLLIN)
            events = []
            while not events:  # readable once the process has exited
                events = poll.poll()
            return not any(ev & select.POLLNVAL for _, ev in events)  # closed under us
        while os.read(fd, 1):  # nobody writes: this returns b"" only when the parent is gone
            pass
    except OSError:
        return False
    return True


def _kill_group_when_gone(kind: str, fd: int, then: str = "") -> None:
    if not _wait_gone(kind, fd):
        return
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
