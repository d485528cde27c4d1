"""One profile at a time per device, across processes: a file lock per device under the cache
directory, so two servers (or a server and the CLI) take turns on a GPU."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .runner import ProgressFn, RunControl


class Cancelled(Exception):
    """The profile was cancelled while it waited for the device."""


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kprof-mcp"


def lock_name(cpu: bool, control: RunControl | None) -> str:
    if cpu:
        return "cpu"
    if control is not None and control.gpu is not None:
        return f"gpu-{control.gpu}"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return f"gpu-{visible or '0'}"


@contextlib.contextmanager
def device_lock(name: str, control: RunControl | None = None, on_progress: ProgressFn | None = None):
    """Machine-wide lock of one device. Waiting for it reports progress and stops (raising
    :class:`Cancelled`) when the job is cancelled."""
    from filelock import FileLock, Timeout

    d = Path(os.environ.get("KPROF_LOCK_DIR") or cache_dir() / "locks")
    d.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(d / f"{name}.lock"))
    told = False
    while True:
        if control is not None and control.cancelled:
            raise Cancelled("the profile was cancelled while waiting for the device")
        try:
            lock.acquire(timeout=0.5)
            break
        except Timeout:
            if not told and on_progress:
                on_progress(0.0, f"waiting for {name}: another kprof process is profiling on it")
                told = True
    try:
        _note_holder(d / f"{name}.holder", name)
        yield
    finally:
        lock.release()


# Who held each device's lock before this process took it (issue 40): a clock lock kept between jobs
# (kprof_mcp.clocks) is still in place only if no other process had the device in between.
HOLDER = f"{os.getpid()}-{os.urandom(6).hex()}"
_previous: dict[str, str] = {}


def _note_holder(path: Path, name: str) -> None:
    """Read the last holder, write this one: never through a link put in the file's place."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            _previous[name] = os.read(fd, 256).decode(errors="replace").strip()
        finally:
            os.close(fd)
    except OSError:
        _previous[name] = ""
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError:
            try:
                if path.is_symlink():
                    path.unlink()  # a link in its place: removed (not followed), the file made anew
                    continue
            except OSError:
                pass
            return
        try:
            os.write(fd, HOLDER.encode())
        finally:
            os.close(fd)
        return


def held_before_by_me(name: str) -> bool:
    """Whether this process was the last before it to hold the device lock ``name`` (held now)."""
    return _previous.get(name) == HOLDER
