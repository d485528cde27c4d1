"""What the engine and a profiling child exchange through files (issue 38): the child's record, read
without trusting it, and the engine's inputs for the child, written again from the engine's own texts.
The files lie in the child's private tmp, which a confined job may write."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from . import safefs


def read_record(path: Path) -> dict[str, Any] | None:
    # The directory is the child's private tmp (a confined command may write it): no link followed,
    # no FIFO or device opened for good, size-capped (issue 38, the independent probe's class).
    # Counted and depth-checked before it is parsed, and said when refused (the fresh probe's F3:
    # 40 MiB of ``{}`` took the server from 81 MB to 1.1 GB, then to an odd "outside ." error).
    try:
        record = json.loads(safefs.read_json_text(path.parent, path, 16 << 20, 100_000))
    except (safefs.Missing, FileNotFoundError):
        return None
    except (safefs.UnsafePath, OSError, ValueError, RecursionError) as e:
        why = e if isinstance(e, safefs.UnsafePath) else safefs.clip(str(e))
        return {"status": "error", "kind": "crash", "message": f"the child's record cannot be read: {why}"}
    if not isinstance(record, dict):
        return None
    if record.get("status") == "ok" and not {"correctness", "calibration", "plain"} & record.keys():
        dirs = record.get("work_dir"), record.get("profile_dir")
        if not all(isinstance(d, str) and d for d in dirs):
            return {
                "status": "error",
                "kind": "crash",
                "message": "the child's record names no run directory",
            }
    return record


def gate(request_json: str | None) -> list[str]:
    """The directory of the file a profiled child waits for (``wait_for``: the engine's scratch), which
    a confined child must read — from the engine's own request text, never from the request file, which
    a job in a reused warm worker may have rewritten (issue 38, the fourth probe's P4-6: a ``wait_for``
    naming a secret's directory widened the next child's read rules)."""
    try:
        req = json.loads(request_json or "")
        return [str(Path(req["wait_for"]).parent)] if req.get("wait_for") else []
    except (ValueError, KeyError, TypeError, AttributeError):
        return []


class Planted(OSError):
    """A child's input file was there before the engine wrote it (another job planted it)."""


def write_inputs(inputs: dict[Path, str]) -> None:
    """Write a child's input files into the directory just made for it, each created new and never through
    a link: the jobs directory is writable by every confined child of the server, so another job may plant
    a link there between the directory's creation and the write (issue 38, the seventh probe's P7-1: the
    server's ``write_text`` followed a planted ``request.json`` link and overwrote an outside file). A name
    already taken raises :class:`Planted`; nothing is followed or overwritten."""
    for path, text in inputs.items():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            why = f"{path.name} was already in the job's new scratch directory (planted by another job)"
            raise Planted(why) from None
        with os.fdopen(fd, "w") as f:
            f.write(text)


def restore(inputs: dict[Path, str]) -> None:
    """Write the child's input files again from the engine's own texts, never through a link: a job in a
    reused warm worker may have rewritten or replaced them (they lie in its tmp) before a fresh process
    reads them (the fourth probe's P4-6)."""
    for path, text in inputs.items():
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)


class ForgedRecord(ValueError):
    """A child's record names run directories this run did not create."""


def run_dirs(work: str, profile: str, out_root: str, since: float) -> tuple[Path, Path]:
    """The run directories a child's record names, checked before the engine writes, renames or reads
    anything there (issue 38, the fourth probe's P4-1 and P4-2: a job that wrote its own record pointed the
    server at another workspace's profile, which it then rewrote, renamed and returned). The work directory
    must be ``<profile directory>.partial``, lie under the request's output root with no link on the way,
    and be a directory created by this run (its inode's change time not before ``since``, the run's start)."""
    w, p = Path(os.path.abspath(work)), Path(os.path.abspath(profile))
    if w.parent != p.parent or w.name != p.name + ".partial":
        raise ForgedRecord(f"{safefs.clip(work)} is not {safefs.clip(profile)}.partial")
    roots = {Path(os.path.abspath(out_root)), Path(os.path.realpath(out_root))}
    root = next((r for r in roots if w.is_relative_to(r) and w != r), None)
    if root is None:
        raise ForgedRecord(f"{safefs.clip(work)} is outside this run's output root {safefs.clip(out_root)}")
    cur, st = root, None
    for part in w.relative_to(root).parts:
        cur = cur / part
        try:
            st = os.lstat(cur)
        except OSError as e:
            raise ForgedRecord(f"{safefs.clip(str(cur))}: {e.strerror}") from None
        if stat.S_ISLNK(st.st_mode):
            raise ForgedRecord(f"{safefs.clip(str(cur))} is a link")
    if st is None or not stat.S_ISDIR(st.st_mode):
        raise ForgedRecord(f"{safefs.clip(work)} is not a directory")
    if st.st_ctime < since - 1.0:
        raise ForgedRecord(f"{safefs.clip(work)} was there before this run started")
    return w, p
