"""The Python line behind each CUDA call of an Nsight Systems recording made with backtraces
(``nsys profile --python-backtrace=cuda --cudabacktrace=all:1 --sample=process-tree``, exported
with ``nsys export --type sqlite --include-json true``; tests/fixtures/nsys-backtrace/README.md).

What nsys 2025.3 writes, and where (seen on an H100 recording):

* every CUDA runtime call it backtraced gets a second row in ``CUPTI_ACTIVITY_KIND_RUNTIME``: event
  class ``TRACE_PROCESS_EVENT_CUDABACKTRACE`` (67), the call's name without ``_v<N>``, the call's
  ``correlationId``, a start a few ns before the call's, and a ``callchainId`` into
  ``CUDA_CALLCHAINS`` (one row per native frame, ``stackDepth`` 0 innermost; ``symbol`` and
  ``module`` are ``StringIds``): libcupti, libcuda, libcudart, then PyTorch's C++ (the Python
  binding, ``torch::autograd::THPVariable_sum``, names the op), then the interpreter;
* the Python stack is an NVTX mark (``NVTX_EVENTS.eventType`` 34, in the domain ``Python Backtrace
  on CUDA``) on the same thread, at the same instant as that backtrace row, whose ``jsonText``
  holds ``{"Python Backtrace on CUDA": {"Frames": [{"Function": <StringId>, "File": <StringId>,
  "Line": n}, ...]}}``, innermost frame first. Without ``--include-json`` the export leaves
  ``jsonText`` empty (the payload has no other export form), and without CPU sampling
  (``--sample=none``) or ``--cudabacktrace`` nsys records no Python backtrace at all.

Pure: reads an open SQLite connection, returns plain values; imports nothing heavy.
"""

from __future__ import annotations

import html
import json
import re
import sqlite3
from typing import Any

RUNTIME_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"
BACKTRACE_CLASS = "TRACE_PROCESS_EVENT_CUDABACKTRACE"
BACKTRACE_CLASS_ID = 67  # its ENUM_NSYS_EVENT_CLASS id when the export has no enum table
PYTHON_DOMAIN = "Python Backtrace on CUDA"
NVTX_MARK = 34  # ENUM_NSYS_EVENT_TYPE NvtxMark
NVTX_DOMAIN_CREATE = 75  # NvtxDomainCreate

Frame = tuple[str, str, int]  # (function, file, line)

# Frames that are not the user's code: libraries, kprof itself, the interpreter's own.
_NOT_USER = re.compile(
    r"(/site-packages/|/dist-packages/|(^|/)torch/|(^|/)triton/|(^|/)kprof_mcp/|(^|/)kprof/"
    r"|/lib/python\d+(\.\d+)*/(?!site-packages|dist-packages))"
)
# The Python binding a CUDA call went through: PyTorch's C++ function for a Tensor method or a
# torch.* function (THPVariable_sum), a torch._C module function (THCPModule_cudaSynchronize).
_BINDING = re.compile(r"\bTHC?P(Variable|Module|Stream|Event|Generator)_(\w+)\(")
_FREED = ("dealloc", "clear", "subclass_dealloc")


def backtrace_class(con: sqlite3.Connection, tables: set[str]) -> int:
    """The ``eventClass`` of the backtrace rows in the runtime table (67 in nsys 2025.3)."""
    if "ENUM_NSYS_EVENT_CLASS" in tables:
        row = con.execute(
            "SELECT id FROM ENUM_NSYS_EVENT_CLASS WHERE name = ?", (BACKTRACE_CLASS,)
        ).fetchone()
        if row:
            return int(row[0])
    return BACKTRACE_CLASS_ID


def is_user_file(path: str) -> bool:
    """A frame of the user's own code: not a library (site-packages, dist-packages, torch/, triton/),
    not kprof (kprof_mcp/, kprof/), not the standard library, not ``<frozen ...>`` or ``<string>``."""
    return bool(path) and not path.startswith("<") and not _NOT_USER.search(path)


def _module(path: str) -> str:
    """``.../site-packages/torch/cuda/__init__.py`` -> ``torch.cuda``; elsewhere the file's name."""
    parts = re.split(r"/(?:site|dist)-packages/", path)
    tail = parts[-1] if len(parts) > 1 else path.rsplit("/", 1)[-1]
    return re.sub(r"(/__init__)?\.py$", "", tail).replace("/", ".")


def binding_op(symbols: list[str]) -> str | None:
    """The op PyTorch's Python binding names in a native call chain (innermost first):
    ``torch::autograd::THPVariable_sum(...)`` -> ``sum``; a tensor's deallocation -> ``tensor freed``."""
    for sym in symbols:
        m = _BINDING.search(sym or "")
        if m:
            return "tensor freed" if m.group(2) in _FREED else m.group(2)
    return None


def user_source(frames: list[Frame], native: list[str] | None = None) -> tuple[str | None, str | None]:
    """(``file:line (function)`` of the innermost frame in the user's code, the op it called).
    The op: the innermost library Python function when the user's line called one
    (``torch.cuda.synchronize``, ``torch.nn.modules.linear.forward``), else the Python binding in
    the native chain (``sum``, ``item``, ``copy_``; ``tensor freed`` for a deallocation, whichever
    line dropped the tensor). (None, op) when no frame is the user's."""
    op = binding_op(native or [])
    lib = f"{_module(frames[0][1])}.{frames[0][0]}" if frames and not is_user_file(frames[0][1]) else None
    if op != "tensor freed" and lib is not None:
        op = lib
    for func, path, line in frames:
        if is_user_file(path):
            return f"{path}:{line} ({func})", op
    return None, op


def python_domains(con: sqlite3.Connection, strings: dict[int, str], name: str = PYTHON_DOMAIN) -> set[int]:
    """The NVTX domains nsys created under ``name`` (the Python backtraces by default; their name as text or a
    StringId)."""
    return {
        int(d)
        for d, text, text_id in con.execute(
            "SELECT domainId, text, textId FROM NVTX_EVENTS WHERE eventType = ?", (NVTX_DOMAIN_CREATE,)
        )
        if d is not None and name in (text, strings.get(text_id))
    }


def payload_of(payload: str | None, domain: str = PYTHON_DOMAIN) -> dict[str, Any] | None:
    """One of nsys' Python payloads (``jsonText``) of ``domain``, parsed; None for a payload that is not one."""
    try:
        bt = json.loads(payload or "")[domain]
    except (ValueError, TypeError, KeyError):
        return None
    return bt if isinstance(bt, dict) else None


def frames_in(bt: dict[str, Any] | None, strings: dict[int, str]) -> list[Frame] | None:
    """The frames (innermost first) of a parsed payload (:func:`payload_of`); None for one without them."""
    if bt is None:
        return None
    try:
        return [
            (
                html.unescape(str(strings.get(f.get("Function"), f.get("Function")))),
                html.unescape(str(strings.get(f.get("File"), f.get("File")))),
                int(f.get("Line") or 0),
            )
            for f in bt.get("Frames") or []
        ]
    except (ValueError, TypeError, AttributeError):
        return None


def sources(con: sqlite3.Connection, tables: set[str], strings: dict[int, str]) -> dict[int, dict[str, Any]]:
    """Each backtraced CUDA call's ``correlationId`` -> ``{"source": "file:line (function)" | None,
    "op": str | None}``. Empty for a recording without backtraces (every recording before kprof
    asked for them, or one exported without ``--include-json``)."""
    if RUNTIME_TABLE not in tables or "NVTX_EVENTS" not in tables:
        return {}
    cols = {r[1] for r in con.execute(f'PRAGMA table_info("{RUNTIME_TABLE}")')}
    nvtx_cols = {r[1] for r in con.execute('PRAGMA table_info("NVTX_EVENTS")')}
    if "callchainId" not in cols or not {"jsonText", "domainId", "text", "textId"} <= nvtx_cols:
        return {}
    domains = python_domains(con, strings)
    if not domains:
        return {}
    cls = backtrace_class(con, tables)
    # The backtrace rows: (thread, start) -> (correlation, call chain).
    rows = {
        (tid, start): (corr, chain)
        for start, tid, corr, chain in con.execute(
            f'SELECT start, globalTid, correlationId, callchainId FROM "{RUNTIME_TABLE}" WHERE eventClass = ?',
            (cls,),
        )
    }
    chains: dict[int, list[str]] = {}
    if "CUDA_CALLCHAINS" in tables:
        for cid, sym in con.execute("SELECT id, symbol FROM CUDA_CALLCHAINS ORDER BY id, stackDepth"):
            chains.setdefault(int(cid), []).append(strings.get(sym, ""))
    marks = ",".join(str(d) for d in sorted(domains))
    out: dict[int, dict[str, Any]] = {}
    for start, tid, payload in con.execute(
        f"SELECT start, globalTid, jsonText FROM NVTX_EVENTS WHERE eventType = {NVTX_MARK} "
        f"AND domainId IN ({marks})"
    ):
        hit = rows.get((tid, start))
        frames = frames_in(payload_of(payload), strings)
        if hit is None or hit[0] is None or frames is None:
            continue
        corr, chain = hit
        src, op = user_source(frames, chains.get(int(chain)) if chain is not None else None)
        out[int(corr)] = {"source": src, "op": op}
    return out
