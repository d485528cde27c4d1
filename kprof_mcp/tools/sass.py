"""A kernel's SASS listing: ``cuobjdump -sass`` over its cubin. Triton ships cuobjdump in
``triton/backends/nvidia/bin`` (found without importing triton); the CUDA toolkit's on PATH
otherwise. It reads the cubin alone: no GPU and no driver needed."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def cuobjdump() -> Path | None:
    """Triton's cuobjdump, else one on PATH, else None."""
    spec = importlib.util.find_spec("triton")
    if spec is not None and spec.origin:
        p = Path(spec.origin).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
        if p.is_file():
            return p
    found = shutil.which("cuobjdump")
    return Path(found) if found else None


# Listings already made in this process, by the cubin's digest: a warm worker re-profiling an unchanged
# kernel reads the same cubin again (issue 40: cuobjdump took ~0.35 s of a 3 s re-profile on an H100).
_LISTINGS: dict[str, str] = {}
_LISTINGS_MAX = 64


# ... and on disk, by the same digest: a confined warm worker runs one job (issue 38), so the next
# profile of an unchanged kernel is another process (its XDG_CACHE_HOME is the workspace's confined cache).
_DISK_MAX = 256  # listings kept on disk at most (the oldest go first)


def _disk() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kprof-mcp" / "sass"


def _read_disk(key: str) -> str | None:
    try:
        text = (_disk() / f"{key}.sass").read_text()
    except (OSError, UnicodeDecodeError):
        return None
    return text if text.strip() else None


def _write_disk(key: str, listing: str) -> None:
    d = _disk()
    try:
        d.mkdir(parents=True, exist_ok=True)
        kept = sorted(d.glob("*.sass"), key=lambda p: p.stat().st_mtime)
        for old in kept[: max(0, len(kept) - _DISK_MAX + 1)]:
            old.unlink(missing_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".part")
        with os.fdopen(fd, "w") as f:
            f.write(listing)
        os.replace(tmp, d / f"{key}.sass")
    except OSError:
        pass  # a cache: the listing is made again next time


def sass_listing(cubin: Path, timeout_s: float = 60.0) -> str | None:
    """The SASS listing of ``cubin``, or None when no cuobjdump is found or it fails."""
    try:
        key = hashlib.sha256(Path(cubin).read_bytes()).hexdigest()
    except OSError:
        return None
    if key in _LISTINGS:
        return _LISTINGS[key]
    cached = _read_disk(key)
    if cached is not None:
        _LISTINGS[key] = cached
        return cached
    tool = cuobjdump()
    if tool is None:
        return None
    try:
        cp = subprocess.run(
            [str(tool), "-sass", str(cubin)], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    listing = cp.stdout if cp.returncode == 0 and cp.stdout.strip() else None
    if listing is not None:
        if len(_LISTINGS) >= _LISTINGS_MAX:
            _LISTINGS.pop(next(iter(_LISTINGS)))
        _LISTINGS[key] = listing
        _write_disk(key, listing)
    return listing
