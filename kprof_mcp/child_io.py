"""What the engine and a profiling child exchange through files (issue 38): the child's record, read
without trusting it, and the engine's inputs for the child, written again from the engine's own texts.
The files lie in the child's private tmp, which a confined job may write."""

from __future__ import annotations

import json
import os
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
    if record.get("status") == "ok" and "correctness" not in record and "calibration" not in record:
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
