"""Profiles on disk: reading a profile directory back, finishing one (reports written, then
the ``.partial`` name dropped), finding the other versions' latest profiles, appending to a
devlog, and remembering which builds were already compiled and autotuned outside a profiler.

Layout: ``<out_root>/<mode>/<kernel>/<params>/<timestamp>-<version>/``. Only a complete
directory carries its final name: a run that failed leaves ``*.partial`` behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from . import safefs
from .locks import cache_dir
from .models import ProfileResult


class StoreError(Exception):
    """A profile directory or devlog cannot be read or written; the message says why."""


# What the server parses of a run directory's JSON (bytes, objects/arrays): far above what kprof
# writes (the largest recorded result.json: 293 KB, 368 objects/arrays; params.json: 2.3 KB, 10),
# far below what takes the server's memory (60 MiB of ``{}``: 19 GB; issue 38, the fresh probe's F3).
RESULT_CAP = (16 << 20, 100_000)
PARAMS_CAP = (4 << 20, 10_000)


def _read(p: Path, name: str, what: str, root: Path | None, cap: tuple[int, int] = RESULT_CAP) -> str:
    """``p/name`` read with no link followed below ``root`` (default: ``p`` itself), refused over
    ``cap`` (bytes, JSON objects/arrays) or nested too deep (:func:`safefs.read_json_text`)."""
    try:
        return safefs.read_json_text(root or p, p / name, *cap)
    except safefs.UnsafePath as e:
        raise StoreError(f"{what}: {e}") from None
    except OSError as e:
        raise StoreError(f"{what}: cannot read {name}: {e.strerror or e}") from None


def _missing(p: Path, name: str, what: str, root: Path | None) -> bool:
    try:
        return safefs.kind(root or p, p / name) == "missing"
    except safefs.UnsafePath as e:
        raise StoreError(f"{what}: {e}") from None


def load_result(p: Path, what: str = "profile_dir", root: Path | None = None) -> ProfileResult:
    if _missing(p, "result.json", what, root):
        raise StoreError(f"{what}: {p} has no result.json: it is not a complete kprof profile directory")
    text = _read(p, "result.json", what, root)
    try:
        return ProfileResult.model_validate_json(text)
    except (ValueError, RecursionError) as e:
        raise StoreError(
            f"{what}: {p / 'result.json'} is corrupt or from an incompatible version: {str(e)[:300]}"
        ) from None


def read_params(p: Path, root: Path | None = None) -> dict[str, Any]:
    if _missing(p, "params.json", "profile_dir", root):
        raise StoreError(f"profile_dir: {p} has no params.json")
    text = _read(p, "params.json", "profile_dir", root, PARAMS_CAP)
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise StoreError(f"profile_dir: {p / 'params.json'} is not valid JSON ({e})") from None


def write_result(work_dir: Path, result: ProfileResult) -> None:
    """Rewrite ``result.json`` in a run's own directory (no link followed)."""
    safefs.write_atomic(work_dir, work_dir / "result.json", result.model_dump_json(indent=2))


def finish_profile(work_dir: Path, final_dir: Path, files: dict[str, str]) -> None:
    """Write the rendered files into ``work_dir`` (created by this run, exclusively), then give it
    its final name: files are created without following links, the rename is done within the
    parent's directory handle."""
    for name, text in files.items():
        safefs.write_atomic(work_dir, work_dir / name, text)
    safefs.rename_in_place(work_dir.parent, work_dir, final_dir)


def sibling_versions(result: ProfileResult, final_dir: Path) -> list[ProfileResult]:
    """The latest finished profile of every *other* version of this kernel with the same
    parameters and mode: the report's comparison table across versions. Links are skipped."""
    latest: dict[str, ProfileResult] = {}
    parent = final_dir.parent
    try:
        entries = safefs.list_dir(parent, parent)
    except (safefs.UnsafePath, OSError):
        return []
    for name, kind in entries:
        d = parent / name
        if kind != "dir" or name.endswith(".partial") or d == final_dir:
            continue
        try:
            r = ProfileResult.model_validate_json(
                safefs.read_json_text(parent, d / "result.json", *RESULT_CAP)
            )
        except (ValueError, OSError, safefs.UnsafePath, RecursionError):
            continue
        if r.version != result.version and r.params == result.params and r.mode == result.mode:
            latest[r.version] = r  # names sort by timestamp: the last one wins
    return [latest[v] for v in sorted(latest)]


def append_devlog(root: Path, path: Path, header: str, make_entry) -> str:
    """Append ``make_entry(existing_text)`` to the devlog at ``path`` (under ``root``, no link
    followed, parents created) under a file lock, with an atomic replace: concurrent writers never
    lose an entry. The lock file lives in kprof's cache, not beside the log: a lock file in the
    workspace could itself be a planted link."""
    from filelock import FileLock

    lock = cache_dir() / "locks" / f"devlog-{hashlib.sha256(str(path).encode()).hexdigest()[:24]}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(lock), timeout=30):
            safefs.make_dirs(root, path.parent)
            k = safefs.kind(root, path)
            text = safefs.read_text(root, path) if k != "missing" else header
            entry = make_entry(text)
            safefs.write_atomic(root, path, text.rstrip("\n") + "\n\n" + entry)
    except safefs.UnsafePath as e:
        raise StoreError(f"devlog: {e}") from None
    return entry


# ----------------------------------------------------------------------------- prepared builds


_KEY_FILE_BYTES = 4 << 20  # a .py file over this is keyed by its size and mtime, not read
_KEY_TOTAL_BYTES = 64 << 20  # past this, every further file too
_KEY_MAX_FILES = 20000


def _key_file(h: Any, name: str, rel: str, dir_fd: int | None, budget: list[int]) -> None:
    """Hash one source file without trusting it: a link, FIFO, socket or device is skipped (opened
    with O_NOFOLLOW | O_NONBLOCK, then a regular file only), and no more than the budget is read."""
    import stat

    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return  # a link (ELOOP), gone, unreadable: not part of the build
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return
        h.update(rel.encode() + b"\0")
        if st.st_size > _KEY_FILE_BYTES or st.st_size > budget[0]:
            h.update(f"size={st.st_size} mtime={st.st_mtime_ns}".encode())
            return
        data = os.read(fd, st.st_size + 1)[: st.st_size]
        budget[0] -= len(data)
        h.update(data)
    finally:
        os.close(fd)


def prepared_key(source: Path, version: str, params: dict[str, Any], gpu_name: str) -> str:
    """Kernel source (every .py file of the package), version, parameters and GPU: what decides
    whether Triton's caches already hold this build and its autotuned config.

    The tree may hold what a confined command planted (issue 38): it is walked by directory
    handle without following links, and only regular files are read, each and all capped, so a
    FIFO or a link to /dev/zero neither blocks the server (holding the device lock) nor fills its
    memory."""
    h = hashlib.sha256()
    budget = [_KEY_TOTAL_BYTES]
    try:
        is_dir = os.path.isdir(source) and not os.path.islink(source)
    except OSError:
        is_dir = False
    if not is_dir:
        _key_file(h, str(source), source.name, None, budget)
    else:
        n = 0
        for dirpath, dirnames, filenames, dfd in os.fwalk(source, follow_symlinks=False):
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, source.parent)
            for name in sorted(filenames):
                if not name.endswith(".py"):
                    continue
                n += 1
                if n > _KEY_MAX_FILES:
                    break
                _key_file(h, name, os.path.join(rel_dir, name), dfd, budget)
            if n > _KEY_MAX_FILES:
                h.update(b"...")
                break
    h.update(json.dumps([version, params, gpu_name], sort_keys=True, default=str).encode())
    return h.hexdigest()


def is_prepared(key: str) -> bool:
    try:
        return key in json.loads((cache_dir() / "prepared.json").read_text())
    except (OSError, ValueError):
        return False


def mark_prepared(key: str) -> None:
    from filelock import FileLock

    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        f = d / "prepared.json"
        with FileLock(str(f) + ".lock", timeout=10):
            try:
                keys = json.loads(f.read_text())
            except (OSError, ValueError):
                keys = {}
            keys[key] = time.time()
            if len(keys) > 5000:  # oldest first out
                keys = dict(sorted(keys.items(), key=lambda kv: kv[1])[-4000:])
            tmp = f.with_name(f"prepared.json.tmp{os.getpid()}")
            tmp.write_text(json.dumps(keys))
            os.replace(tmp, f)
    except OSError:
        pass  # the cache is an optimisation; without it every Nsight run prepares first
