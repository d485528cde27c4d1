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

from .locks import cache_dir
from .models import ProfileResult


class StoreError(Exception):
    """A profile directory or devlog cannot be read or written; the message says why."""


def load_result(p: Path, what: str = "profile_dir") -> ProfileResult:
    f = p / "result.json"
    if not f.is_file():
        raise StoreError(f"{what}: {p} has no result.json: it is not a complete kprof profile directory")
    try:
        return ProfileResult.model_validate_json(f.read_text())
    except ValueError as e:
        raise StoreError(f"{what}: {f} is corrupt or from an incompatible version: {str(e)[:300]}") from None


def read_params(p: Path) -> dict[str, Any]:
    f = p / "params.json"
    if not f.is_file():
        raise StoreError(f"profile_dir: {p} has no params.json")
    try:
        return json.loads(f.read_text())
    except json.JSONDecodeError as e:
        raise StoreError(f"profile_dir: {f} is not valid JSON ({e})") from None


def finish_profile(work_dir: Path, final_dir: Path, files: dict[str, str]) -> None:
    """Write the rendered files into ``work_dir``, then give it its final name."""
    for name, text in files.items():
        (work_dir / name).write_text(text)
    work_dir.rename(final_dir)


def sibling_versions(result: ProfileResult, final_dir: Path) -> list[ProfileResult]:
    """The latest finished profile of every *other* version of this kernel with the same
    parameters and mode: the report's comparison table across versions."""
    latest: dict[str, ProfileResult] = {}
    parent = final_dir.parent
    if not parent.is_dir():
        return []
    for d in sorted(parent.iterdir()):
        if d.name.endswith(".partial") or not (d / "result.json").is_file() or d == final_dir:
            continue
        try:
            r = ProfileResult.model_validate_json((d / "result.json").read_text())
        except ValueError:
            continue
        if r.version != result.version and r.params == result.params and r.mode == result.mode:
            latest[r.version] = r  # names sort by timestamp: the last one wins
    return [latest[v] for v in sorted(latest)]


def append_devlog(path: Path, header: str, make_entry) -> str:
    """Append ``make_entry(existing_text)`` to the devlog at ``path`` under a file lock, with an
    atomic replace: concurrent writers never lose an entry."""
    from filelock import FileLock

    with FileLock(str(path) + ".lock", timeout=30):
        text = path.read_text() if path.exists() else header
        entry = make_entry(text)
        tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        tmp.write_text(text.rstrip("\n") + "\n\n" + entry)
        os.replace(tmp, path)
    return entry


# ----------------------------------------------------------------------------- prepared builds

def prepared_key(source: Path, version: str, params: dict[str, Any], gpu_name: str) -> str:
    """Kernel source (every .py file of the package), version, parameters and GPU: what decides
    whether Triton's caches already hold this build and its autotuned config."""
    h = hashlib.sha256()
    files = [source] if source.is_file() else sorted(source.rglob("*.py"))
    for f in files:
        h.update(str(f.relative_to(source.parent)).encode())
        h.update(f.read_bytes())
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
