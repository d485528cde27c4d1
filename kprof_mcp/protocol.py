"""The protocol between the parent (:mod:`kprof_mcp.runner`) and a profiling child
(:mod:`kprof_mcp.child`): shared by both sides, so neither imports the other.

* The child is started as ``python -m kprof_mcp.child <command> ...``: ``describe --source
  PATH`` prints a package's description as JSON; ``run --request FILE --result FILE`` profiles;
  ``finish --request FILE --work-dir DIR --log FILE --profiler FILE --result FILE`` reads a
  profiler's output into a result (a separate process: a corrupt report that crashes a native
  parser takes down only that child).
* ``serve --commands-fd FD`` is the warm worker (:mod:`kprof_mcp.child.serve`): it runs the other
  commands one after another in one process, reading ``{"job": N, "argv": [...]}`` lines from FD.
* Progress goes to stdout as lines ``@@KPROF {"progress": 0.3, "message": "..."}``; every
  other line is the kernel's own output.
* The outcome goes to ``--result``: ``{"status": "ok", "work_dir": ..., "profile_dir": ...}``
  or ``{"status": "error", "kind": ..., "message": ..., "detail": {...}}``.
* Exit codes: 0 ok, 2 an expected error (bad parameters, too large, incorrect results, a mode
  that cannot run here), 3 a known CUDA/OOM/disk failure, anything else a crash whose stderr
  the parent reports.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

PROGRESS_PREFIX = "@@KPROF "
# A warm worker (``python -m kprof_mcp.child serve``) prints these on lines of their own: once when
# it is warm (its start-up facts as JSON), and after each command ({"job": N, "rc": RC}).
READY_PREFIX = "@@KPROF-READY "
DONE_PREFIX = "@@KPROF-DONE "
MAX_MESSAGE = 500  # characters of a progress message forwarded
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
CHILD_MODULE = "kprof_mcp.child"
EXIT_OK, EXIT_EXPECTED, EXIT_KNOWN_FAILURE = 0, 2, 3


class ExpectedError(Exception):
    """A failure the caller can act on. ``kind``: params, too_large, incorrect, mode, load,
    or a profiler's own kinds (nothing_profiled, counters_not_permitted, ...)."""

    def __init__(self, kind: str, message: str, detail: dict[str, Any] | None = None):
        super().__init__(message)
        self.kind = kind
        self.detail = detail or {}

    def record(self) -> dict[str, Any]:
        return {"status": "error", "kind": self.kind, "message": str(self), "detail": self.detail}


def progress(fraction: float, message: str) -> None:
    """Report progress to the parent (child side)."""
    print(PROGRESS_PREFIX + json.dumps({"progress": round(fraction, 3), "message": message}), flush=True)


def python_argv(module: str | None = None, code: str | None = None) -> list[str]:
    """This interpreter running ``-m module`` or ``-c code`` with nothing of the working directory on
    ``sys.path``: kprof's own processes start in the server's working directory (a workspace), where a
    ``glob.py`` or ``subprocess.py`` would otherwise shadow the standard library in them before any
    confinement (issue 38's fresh probe, F1). ``-P`` from Python 3.11; before, a ``-c`` stub that drops
    ``sys.path[0]`` before it imports anything. The flag is not inherited: a user's ``python script.py``
    still finds its own directory first."""
    if sys.version_info >= (3, 11):
        return [sys.executable, "-P", "-m", module] if module else [sys.executable, "-P", "-c", code or ""]
    stub = "import sys; del sys.path[0]; "
    if module:
        run = f"import runpy; runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
        return [sys.executable, "-c", stub + run]
    return [sys.executable, "-c", stub + (code or "")]


def child_command(*args: str) -> list[str]:
    """The argument vector that starts a child (parent side)."""
    return [*python_argv(module=CHILD_MODULE), *args]


def parse_progress(line: str) -> tuple[float, str] | None:
    """A progress line's (fraction, message), or None for any other line."""
    if not line.startswith(PROGRESS_PREFIX):
        return None
    try:
        msg = json.loads(line[len(PROGRESS_PREFIX) :])
        fraction, message = msg["progress"], msg["message"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    # A child's line is not trusted (a user's command may print one): a fraction that is no finite
    # number is dropped (NaN and infinities went out as a null progress, the fourth probe's P4-12),
    # others clamped to [0, 1]; the message cut and stripped of control characters.
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not math.isfinite(fraction):
        return None
    return min(max(float(fraction), 0.0), 1.0), _CONTROL.sub("", str(message))[:MAX_MESSAGE]
