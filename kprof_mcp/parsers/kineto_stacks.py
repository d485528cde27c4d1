"""The Python line behind each CUDA call of a Kineto trace recorded with Python stacks (``torch.profiler``'s
``with_stack=True``: the timeline's Kineto engine with ``python_backtrace``), as :mod:`.nsys_backtrace` gives it
for Nsight Systems. The trace's ``python_function`` events (``path/file.py(line): function``, one per Python
call, nested per thread) that enclose a runtime or driver call are its Python stack: the innermost frame in the
user's code is its ``source`` (``file:line (function)``; Kineto records calls, not lines, so the line is the
function's own; :func:`~.nsys_backtrace.user_source`), the innermost library function its ``op``
(``torch.cuda.synchronize``) where the call is under one, else the innermost PyTorch operator around it
(``aten::item``).

Pure: events in, two lists out.
"""

from __future__ import annotations

import re
from typing import Any

from .nsys_backtrace import Frame, is_user_file, user_source

_NAME = re.compile(r"^(?P<path>.*)\((?P<line>\d+)\): (?P<func>.*)$")
_FRAME, _CALL, _OP = 0, 1, 2  # what an event is, in the sweep


def frame_of(name: str) -> Frame | None:
    """``train.py(42): step`` -> ``("step", "train.py", 42)``; None for a name without a file and line
    (``<built-in function linear>``)."""
    m = _NAME.match(name or "")
    return (m["func"], m["path"], int(m["line"])) if m else None


def _library(frame: Frame) -> str:
    """``("forward", "torch/nn/modules/linear.py", 124)`` -> ``torch.nn.modules.linear.forward`` (Kineto gives a
    library's path from its package down)."""
    func, path, _ = frame
    path = re.split(r"/(?:site|dist)-packages/", path)[-1]
    return f"{re.sub(r'(/__init__)?[.]py$', '', path).replace('/', '.')}.{func}"


def call_sources(
    python: list[dict[str, Any]], calls: list[dict[str, Any]], cpu_ops: list[dict[str, Any]] = ()
) -> tuple[list, list]:
    """For each of ``calls`` (dicts with ``start``, ``end``, ``tid``), its (source, op) from the ``python`` and
    ``cpu_ops`` events (``name``, ``start``, ``end``, ``tid``) that enclose it on its thread: a sweep per thread
    in time order with the open events as a stack (they nest), innermost first. (None, None) for a call nothing
    encloses."""
    by_tid: dict[Any, list] = {}
    for p in python:
        if (f := frame_of(p["name"])) is not None:
            by_tid.setdefault(p["tid"], []).append((p["start"], _FRAME, p["end"], f))
    for o in cpu_ops:
        by_tid.setdefault(o["tid"], []).append((o["start"], _OP, o["end"], o["name"]))
    mine: dict[Any, list] = {}
    for i, c in enumerate(calls):
        mine.setdefault(c["tid"], []).append((c["start"], _CALL, c["end"], i))
    sources: list = [None] * len(calls)
    ops: list = [None] * len(calls)
    for tid, own in mine.items():
        # enclosing events first at equal starts (the longer first), the calls after them
        events = sorted(by_tid.get(tid, []) + own, key=lambda e: (e[0], e[1] == _CALL, -e[2]))
        stack: list = []  # (end, kind, what), outermost first
        for start, kind, end, what in events:
            while stack and stack[-1][0] < start:
                stack.pop()
            if kind != _CALL:
                stack.append((end, kind, what))
                continue
            around = [(k, w) for e, k, w in reversed(stack) if e >= end]
            frames = [w for k, w in around if k == _FRAME]
            sources[what], _ = user_source(frames)
            lib = frames[0] if frames and not is_user_file(frames[0][1]) else None
            ops[what] = _library(lib) if lib else next((w for k, w in around if k == _OP), None)
    return sources, ops
