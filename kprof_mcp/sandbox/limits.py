"""Resource limits of a confined job (issue 38): how many tasks (processes and threads) it may have at
once, how large a file it may write, no core dump.

* **Tasks**: a ``pids`` cgroup of the job's own (``pids.max``), made by the supervisor below its own
  cgroup where it may (root, or a delegated cgroup; v1's ``pids`` hierarchy or v2), joined by the
  job's first process before anything else runs and removed when the job ends. Otherwise, for
  another user than root, ``RLIMIT_NPROC`` (which counts every task of the user: set to what the
  user has now plus the job's limit). As root without a ``pids`` cgroup there is no limit
  (``RLIMIT_NPROC`` does not apply to root): :func:`task_limit_kind` says which.
* **File size**: ``RLIMIT_FSIZE``, half the free space of the fullest filesystem the job writes (at
  least 1 GiB): one file cannot fill a disk; many files still can.
* No core dump (``RLIMIT_CORE`` 0).

Memory is limited by a memory cgroup (:mod:`kprof_mcp.sandbox.memory`; ``RLIMIT_AS`` would break CUDA,
which reserves large address ranges). CPU time, disk space as a whole and GPU time are not limited here
(the job's time limit bounds them in time).
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

GIB = 1 << 30
CGROUP_ROOT = Path("/sys/fs/cgroup")
_PREFIX = "kprof-job-"


def max_tasks() -> int:
    """The tasks one job may have at once: ``KPROF_JOB_MAX_TASKS``, else 64 per CPU, 1024 to 16384
    (a torch job on a large machine has a thread per core per process)."""
    try:
        n = int(os.environ.get("KPROF_JOB_MAX_TASKS", ""))
        if n > 0:
            return n
    except ValueError:
        pass
    return min(16384, max(1024, 64 * (os.cpu_count() or 1)))


def max_file_bytes(paths: list[str]) -> int:
    """Half the free space of the fullest filesystem among ``paths`` (a path not made yet: its nearest
    existing directory), at least 1 GiB."""
    free = []
    for p in paths:
        for d in (Path(p), *Path(p).parents):
            try:
                st = os.statvfs(d)
            except OSError:
                continue
            free.append(st.f_bavail * st.f_frsize)
            break
    return max(GIB, min(free) // 2) if free else 0


# ------------------------------------------------------------------ the pids cgroup (the supervisor's)
def _pids_parent() -> Path | None:
    """The directory of this process's cgroup in a hierarchy that has the pids controller (v1's
    ``pids`` hierarchy, else v2's unified one), or None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    v2 = None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            d = CGROUP_ROOT / "pids" / path.lstrip("/")
            if d.is_dir():
                return d
        elif controllers == "":
            v2 = CGROUP_ROOT / path.lstrip("/")
    if v2 is not None and v2.is_dir():
        try:
            if "pids" in (v2 / "cgroup.controllers").read_text().split():
                return v2
        except OSError:
            pass
    return None


def _sweep(parent: Path) -> None:
    """Remove the empty cgroups of supervisors that died before removing theirs (kill -9)."""
    for d in parent.glob(_PREFIX + "*"):
        pid = d.name[len(_PREFIX) :]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            try:
                d.rmdir()
            except OSError:
                pass


def make_cgroup(limit: int) -> Path | None:
    """A pids cgroup for this supervisor's job with ``pids.max`` = ``limit``; None where none can be
    made (no pids controller, no right to write the hierarchy)."""
    if limit <= 0:
        return None
    parent = _pids_parent()
    if parent is None:
        return None
    _sweep(parent)
    d = parent / f"{_PREFIX}{os.getpid()}"
    try:
        if not (parent / "pids.max").exists() and (parent / "cgroup.subtree_control").exists():
            # v2: the controller must be on for the children (refused where the parent holds processes)
            if "pids" not in (parent / "cgroup.subtree_control").read_text().split():
                (parent / "cgroup.subtree_control").write_text("+pids")
        d.mkdir(exist_ok=True)
        (d / "pids.max").write_text(str(limit))
        return d
    except OSError:
        remove_cgroup(d)
        return None


def limit_tasks_in(d: Path, limit: int) -> Path | None:
    """v2, where a process is in one cgroup only: limit the tasks of the job's memory cgroup ``d``
    (:mod:`kprof_mcp.sandbox.memory`; below ``kprof-jobs``) instead of making one of its own."""
    if limit <= 0:
        return None
    try:
        for p in (d.parent.parent, d.parent):
            sub = p / "cgroup.subtree_control"
            if "pids" not in sub.read_text().split():
                sub.write_text("+pids")
        (d / "pids.max").write_text(str(limit))
        return d
    except OSError:
        return None


def join_cgroup(d: Path | None) -> bool:
    """Move this process (the job's first, before it starts anything) into ``d``."""
    if d is None:
        return False
    try:
        (d / "cgroup.procs").write_text(str(os.getpid()))
        return True
    except OSError:
        return False


def remove_cgroup(d: Path | None) -> None:
    """Remove the job's cgroup once its processes are gone (a few tries: the last ones are being reaped)."""
    if d is None:
        return
    import time

    for _ in range(20):
        try:
            d.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)


def controller_for_children(d: Path, controller: str) -> bool:
    """v2: whether cgroups made below ``d`` get ``controller`` (on in its ``subtree_control``, or turned on
    now). Refused where ``d`` holds processes (v2's rule: none in a cgroup whose children have
    controllers): a server in a container's cgroup, beside its shell, gets no job cgroup there."""
    sub = d / "cgroup.subtree_control"
    try:
        if controller in sub.read_text().split():
            return True
        sub.write_text("+" + controller)
        return True
    except OSError:
        return False


def task_limit_kind() -> str:
    """How a job's tasks are limited here: ``pids cgroup``, ``RLIMIT_NPROC`` or ``none``."""
    parent = _pids_parent()
    if parent is not None and os.access(parent, os.W_OK):
        v1 = (parent / "pids.max").exists() or not (parent / "cgroup.subtree_control").exists()
        if v1 or controller_for_children(parent, "pids"):
            return "pids cgroup"
    return "RLIMIT_NPROC" if os.geteuid() != 0 else "none"


# ------------------------------------------------------------------ the rlimits (the confined process's)
def _user_tasks(uid: int) -> int:
    """The tasks (threads) of the processes whose real user is ``uid``."""
    n = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            status = Path(f"/proc/{name}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            n += int(fields.get("Threads", "1").strip() or 1)
    return n


def apply_rlimits(tasks: int, file_bytes: int, in_cgroup: bool) -> None:
    """In the confined process before ``exec``: no core dump, files up to ``file_bytes``, and where no
    cgroup limits its tasks and it is not root, ``RLIMIT_NPROC`` at the user's tasks now plus ``tasks``."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if file_bytes > 0:
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        cap = file_bytes if hard == resource.RLIM_INFINITY else min(hard, file_bytes)
        resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))
    if tasks > 0 and not in_cgroup and os.geteuid() != 0:
        soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        want = _user_tasks(os.getuid()) + tasks
        cap = want if hard == resource.RLIM_INFINITY else min(hard, want)
        resource.setrlimit(resource.RLIMIT_NPROC, (cap, cap))
