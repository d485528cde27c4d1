"""Removing a job's temporary directory, whatever the job left in it (issue 38, the fourth probe's
P4-10: 1,500 nested directories made Python 3.11's recursive ``shutil.rmtree`` raise
``RecursionError``, the tool's error a bare "maximum recursion depth exceeded", the directory left).

Iterative, one directory handle open at a time, never following a link; what cannot be removed is a
warning in the server's log, never an error of the job.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator

from .safefs import clip

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: str | os.PathLike[str]) -> list[str]:
    """Remove the directory ``path`` and everything under it, without recursion (a job may leave
    thousands of nested directories: Python 3.11's ``shutil.rmtree`` recurses once a level, the
    fourth probe's P4-10) and without following a link: one directory handle open at a time, opened
    with ``O_NOFOLLOW`` below its parent, the parent found again by ``..`` checked against its inode.
    A directory its owner may not read or write is made so first. Returns what could not be removed
    ("name: why", a few), empty when all was."""
    failed: list[str] = []
    try:
        fd = _open_dir(
            os.open(os.path.dirname(os.path.abspath(path)), _DIR), os.path.basename(path), close=True
        )
    except FileNotFoundError:
        return failed
    except OSError as e:
        return [f"{os.fspath(path)}: {e.strerror}"]
    # a level: (its name in its parent, its (dev, ino), names under it that could not be removed)
    stack: list[tuple[str, tuple[int, int], set[str]]] = []
    here: tuple[str, tuple[int, int], set[str]] = ("", _ident(fd), set())
    while True:
        child = _empty_but_dirs(fd, here[2], failed)
        if child is not None:  # go down into it
            try:
                nfd = _open_dir(fd, child)
            except OSError as e:
                here[2].add(child)
                _note(failed, child, e)
                continue
            stack.append(here)
            os.close(fd)
            fd, here = nfd, (child, _ident(nfd), set())
            continue
        if not stack:
            os.close(fd)
            break
        name, parent = here[0], stack.pop()  # up again, then remove the (now empty) directory
        try:
            pfd = os.open("..", _DIR, dir_fd=fd)
        except OSError:
            pfd = -1
        os.close(fd)
        if pfd < 0 or _ident(pfd) != parent[1]:
            if pfd >= 0:
                os.close(pfd)
            failed.append(f"{name}: its parent directory was moved while it was removed")
            return failed
        fd, here = pfd, parent
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError as e:
            here[2].add(name)
            _note(failed, name, e)
    try:
        os.rmdir(path)
    except OSError as e:
        _note(failed, os.fspath(path), e)
    return failed


def _ident(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _note(failed: list[str], name: str, e: OSError) -> None:
    if len(failed) < 5:
        failed.append(f"{clip(name, 80)}: {e.strerror or e}")
    elif len(failed) == 5:
        failed.append("…")


def _open_dir(fd: int, name: str, close: bool = False) -> int:
    """``name`` under ``fd``, a directory and no link; ``close``: ``fd`` is closed after."""
    try:
        try:
            return os.open(name, _DIR, dir_fd=fd)
        except PermissionError:  # mode 0 or so: its owner may give itself the right back
            nfd = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            try:
                os.chmod(f"/proc/self/fd/{nfd}", 0o700)  # the directory just opened, never a link
            finally:
                os.close(nfd)
            return os.open(name, _DIR, dir_fd=fd)
    finally:
        if close:
            os.close(fd)


def _empty_but_dirs(fd: int, skip: set[str], failed: list[str]) -> str | None:
    """Unlink what ``fd`` holds but directories; return one directory to go into (not in ``skip``),
    or None when none is left."""
    for attempt in (0, 1):
        with os.scandir(fd) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        denied = False
        for name, is_dir in entries:
            if name in skip:
                continue
            if is_dir:
                return name
            try:
                os.unlink(name, dir_fd=fd)
            except PermissionError:
                denied = True
            except FileNotFoundError:
                pass
            except OSError as e:
                skip.add(name)
                _note(failed, name, e)
        if not denied:
            return None
        if attempt == 0:
            try:
                os.fchmod(fd, 0o700)  # a directory its owner made read-only
            except OSError:
                pass
    for name, is_dir in entries:
        if name not in skip and not is_dir:
            skip.add(name)
            _note(failed, name, PermissionError(13, "Permission denied"))
    return None


@contextmanager
def temp_dir(prefix: str, dir: str | os.PathLike[str] | None = None) -> Iterator[str]:
    """A new temporary directory, removed at the end with :func:`remove_tree`: never an error
    then, only a warning in the server's log naming what was left (P4-10)."""
    import logging
    import tempfile

    d = tempfile.mkdtemp(prefix=prefix, dir=dir)
    try:
        yield d
    finally:
        left = remove_tree(d)
        if left:
            logging.getLogger("kprof_mcp.server").warning(
                "kprof: the job's temporary directory %s could not be removed whole; left: %s",
                d,
                "; ".join(left),
            )
