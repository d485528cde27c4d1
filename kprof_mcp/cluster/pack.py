"""Packing a job's files for the trip between server and worker: a directory (or a file) as
deterministic tar.gz bytes, size-limited, and unpacked without letting a member land outside."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from .errors import ClusterError

MAX_PACKAGE_BYTES = 32 << 20  # a kernel package shipped to a worker
MAX_RESULT_BYTES = 256 << 20  # a profile directory shipped back (the .ncu-rep included)
MAX_COMMAND_DIR_BYTES = 64 << 20  # a command's working directory shipped to a worker (profile_command)


def pack(path: Path, limit: int, what: str) -> bytes:
    """A directory or file as tar.gz bytes (``__pycache__`` left out), refusing past ``limit``.
    The same files give the same bytes (sorted members, no gzip timestamp), so a worker can tell
    an unchanged package by its digest."""
    import gzip

    def skip(ti: tarfile.TarInfo):
        if "__pycache__" in ti.name.split("/") or ti.name.endswith(".pyc"):
            return None
        if ti.isdir():
            ti.mtime = 0  # a directory's time moves when Python writes __pycache__ in it
        return ti

    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        members = [path] + (sorted(path.rglob("*")) if path.is_dir() else [])
        for m in members:
            tar.add(
                str(m),
                arcname=str(Path(path.name) / m.relative_to(path)) if m != path else path.name,
                recursive=False,
                filter=skip,
            )
    data = buf.getvalue()
    if len(data) > limit:
        raise ClusterError(
            f"{what} is {len(data) / 2**20:.1f} MiB packed, over the {limit / 2**20:.0f} MiB limit for "
            "shipping between server and worker"
        )
    return data


def unpack(data: bytes, dest: Path) -> None:
    """Unpack tar.gz bytes under ``dest``, refusing members that would land outside it."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(dest, filter="data")
