"""The memory limit of confined jobs (issue 38, the ninth probe's P9-2).

A command that spread its memory over many processes smaller than the server got the *server*
OOM-killed (the OOM killer weighs each process on its own). The job's processes start at
``oom_score_adj`` 1000 (:func:`kprof_mcp.sandbox.__main__._oom_first`), which settles the accidental
case; a deliberate job may lower its score back to 0 and then stands level with the server. Here the
kernel settles it: every confined process (commands, kernel children, warm workers) runs in a memory
cgroup of its job's own, below one shared ``kprof-jobs`` cgroup, both limited to :func:`max_memory`
(the memory the machine or the server's own cgroup has, less a reserve for the server). When the jobs
together reach it the OOM killer chooses among the jobs' processes only; the server, outside, is never
its victim on their account. A job cannot leave its cgroup: ``/sys/fs/cgroup`` is not writable to it
(Landlock).

Where no memory cgroup can be made (no ``memory`` controller, a read-only hierarchy as in most
containers, another user than root without a delegated cgroup) nothing is limited and
:func:`limit_kind` says so; the OOM score above still applies.
"""

from __future__ import annotations

import os
from pathlib import Path

from .limits import _sweep, controller_for_children
from .limits import remove_cgroup as remove  # the job's memory cgroup: the same removal

GIB = 1 << 30
CGROUP_ROOT = Path("/sys/fs/cgroup")
SHARED = "kprof-jobs"  # the jobs' shared cgroup, below the server's own
_PREFIX = "kprof-job-"  # a job's, below SHARED: kprof-job-<supervisor pid>
_UNLIMITED = 1 << 60  # v1 prints 9223372036854771712 for "no limit", v2 "max"


def _memory_cgroup() -> tuple[Path, bool] | None:
    """This process's cgroup directory in the hierarchy with the memory controller and whether it is
    v2's unified one; None where there is none."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    v2 = None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            d = CGROUP_ROOT / "memory" / path.lstrip("/")
            if d.is_dir():
                return d, False
        elif controllers == "":
            v2 = CGROUP_ROOT / path.lstrip("/")
            if not v2.is_dir() and (CGROUP_ROOT / "unified").is_dir():
                v2 = CGROUP_ROOT / "unified" / path.lstrip("/")
    try:
        if v2 is not None and "memory" in (v2 / "cgroup.controllers").read_text().split():
            return v2, True
    except OSError:
        pass
    return None


def _limit_file(v2: bool) -> str:
    return "memory.max" if v2 else "memory.limit_in_bytes"


def _read_limit(d: Path, v2: bool) -> int:
    try:
        text = (d / _limit_file(v2)).read_text().strip()
    except OSError:
        return _UNLIMITED
    return _UNLIMITED if text == "max" or not text.isdigit() else min(int(text), _UNLIMITED)


def available_memory() -> int:
    """The memory this server and its jobs may use: the machine's, or less where the server's cgroup
    (or one above it, as far as it is visible) is limited."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    found = _memory_cgroup()
    if found is None:
        return total
    d, v2 = found
    mount = CGROUP_ROOT if v2 else CGROUP_ROOT / "memory"
    for p in (d, *d.parents):
        if p.name == SHARED or (p != mount and not str(p).startswith(str(mount))):
            break
        total = min(total, _read_limit(p, v2))
        if p == mount:
            break
    return total


def max_memory() -> int:
    """The memory all confined jobs together may use: ``KPROF_JOB_MAX_MEMORY`` (bytes; 0: no limit),
    else :func:`available_memory` less a reserve for the server (an eighth, at least 1 GiB), and at least
    half of it."""
    raw = os.environ.get("KPROF_JOB_MAX_MEMORY", "").strip()
    if raw:
        try:
            return max(0, int(raw))
        except ValueError:
            pass
    total = available_memory()
    return max(total // 2, total - max(GIB, total // 8))


def per_job(limit: int) -> int:
    """One job's limit within the jobs' ``limit``: room left for the others (the warm workers, a
    concurrent job: an eighth, at least 1 GiB), so that one job reaching its own limit has its own
    processes killed, not another job's (the tenth probe's P10-4: with both limits equal a job at
    ``oom_score_adj`` 0 got the describe worker killed at the shared level); at least half of it."""
    return max(limit // 2, limit - max(GIB, limit // 8))


def remove_shared() -> None:
    """Remove the jobs' shared cgroup when no job is in it (the server's exit: another server's jobs
    may still be there, then it stays)."""
    found = _memory_cgroup()
    if found is not None:
        shared = found[0] / SHARED
        _sweep(shared)
        try:
            shared.rmdir()
        except OSError:
            pass


def _enable(d: Path) -> None:
    """v2: the memory controller on for ``d``'s children, or OSError."""
    if not controller_for_children(d, "memory"):
        raise OSError(f"no memory controller for the children of {d}")


def unified() -> bool:
    """Whether the memory controller is in v2's unified hierarchy (where a process is in one cgroup only:
    the job's memory cgroup is its pids cgroup too, :func:`kprof_mcp.sandbox.limits.limit_tasks_in`)."""
    found = _memory_cgroup()
    return found is not None and found[1]


def make(limit: int) -> Path | None:
    """The job's memory cgroup (``kprof-jobs/kprof-job-<this pid>`` below the server's cgroup): the shared
    one limited to ``limit`` bytes, the job's to :func:`per_job` of it; None where none can be made."""
    if limit <= 0:
        return None
    found = _memory_cgroup()
    if found is None:
        return None
    parent, v2 = found
    if parent.name.startswith(_PREFIX) or parent.name == SHARED:
        return None  # already a job's (a nested sandbox): its limit holds
    shared = parent / SHARED
    d = shared / f"{_PREFIX}{os.getpid()}"
    try:
        if v2:
            _enable(parent)
        shared.mkdir(exist_ok=True)
        try:  # the latest job's policy (one server: the same); refused below the jobs' present use
            (shared / _limit_file(v2)).write_text(str(limit))
        except OSError:
            pass
        if v2:
            _enable(shared)
        _sweep(shared)
        d.mkdir(exist_ok=True)
        (d / _limit_file(v2)).write_text(str(per_job(limit)))
        return d
    except OSError:
        remove(d)
        return None


def join(d: Path | None) -> bool:
    """Move this process (the job's first, before it starts anything) into ``d``."""
    if d is None:
        return False
    try:
        (d / "cgroup.procs").write_text(str(os.getpid()))
        return True
    except OSError:
        return False


def oom_kills(d: Path | None) -> int:
    """How many of the job's processes the OOM killer took at its limit (0 where not known)."""
    if d is None:
        return 0
    for name in ("memory.events", "memory.oom_control"):  # v2, v1 (Linux 4.13 and later)
        try:
            for line in (d / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and value.strip().isdigit():
                    return int(value)
        except OSError:
            continue
    return 0


def limit_kind() -> str:
    """How the jobs' memory is limited here: ``memory cgroup`` or ``none``."""
    found = _memory_cgroup()
    if found is None or max_memory() <= 0:
        return "none"
    parent, v2 = found
    if not os.access(parent, os.W_OK) or (v2 and not controller_for_children(parent, "memory")):
        return "none"
    return "memory cgroup"
