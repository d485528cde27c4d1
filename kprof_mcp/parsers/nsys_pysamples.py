"""The Python stack the host was running, sampled: Nsight Systems' periodic Python samples of a
recording made with Python backtraces (``nsys profile --python-sampling=true``, which kprof adds with
``python_backtrace`` where nsys has it; exported with ``--include-json true``).

What nsys 2025.3 writes (seen on an H200 recording, docs/evidence/machine-model/python_sampling_probe_2026-11-28.log):
each sample is an NVTX mark (``NVTX_EVENTS.eventType`` 34) in the domain ``Python Periodic Sampling``,
on the sampled thread (``globalTid``) at the sample's instant (``start``), whose ``jsonText`` holds
``{"Python Periodic Sampling": {"Thread state": "Running", "Frames": [{"Function": <StringId>,
"File": <StringId>, "Line": n}, ...]}}``, innermost frame first. A CUDA backtrace names the line of
each CUDA call; a sample names the line the host was running between calls (a deep copy, a tracer,
a formatter), which no CUDA call shows.

Pure: reads an open SQLite connection, returns plain values; imports nothing heavy.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .nsys_backtrace import NVTX_MARK, frames_in, payload_of, python_domains, user_source

SAMPLING_DOMAIN = "Python Periodic Sampling"
# The sample's instant (ns), thread, user line, library function, and whether the thread was blocked
# (nsys' thread state "Blocking Wait": waiting, not running Python or C++ for the step).
COLUMNS = ["start", "tid", "source", "op", "blocked"]
BLOCKED = "Blocking Wait"


def load(con: sqlite3.Connection, tables: set[str], strings: dict[int, str]) -> list[dict[str, Any]]:
    """Every periodic Python sample, in time order: ``start`` (ns), ``tid`` (nsys' globalTid),
    ``source`` (``file:line (function)`` of the innermost frame in the user's code, or None) and
    ``op`` (the innermost library function the user's line was in, ``copy.deepcopy``, or None) and
    ``blocked`` (the thread state was :data:`BLOCKED`).
    Empty for a recording without samples (every recording before kprof asked for them, one made
    without ``python_backtrace``, or one exported without ``--include-json``)."""
    if "NVTX_EVENTS" not in tables:
        return []
    cols = {r[1] for r in con.execute('PRAGMA table_info("NVTX_EVENTS")')}
    if not {"jsonText", "domainId", "text", "textId"} <= cols:
        return []
    domains = sorted(python_domains(con, strings, SAMPLING_DOMAIN))
    if not domains:
        return []
    marks = ",".join(str(d) for d in domains)
    out = []
    for start, tid, payload in con.execute(
        f"SELECT start, globalTid, jsonText FROM NVTX_EVENTS WHERE eventType = {NVTX_MARK} "
        f"AND domainId IN ({marks}) ORDER BY start"
    ):
        bt = payload_of(payload, SAMPLING_DOMAIN)  # parsed once: its frames and its thread state
        frames = frames_in(bt, strings)
        if frames is None or start is None:
            continue
        src, op = user_source(frames)
        out.append(
            {
                "start": float(start),
                "tid": tid,
                "source": src,
                "op": op,
                "blocked": bt.get("Thread state") == BLOCKED,
            }
        )
    return out


def frame(rows: list[dict[str, Any]]):
    """:func:`load`'s rows as a DataFrame of :data:`COLUMNS` (``start`` float ns)."""
    import pandas as pd

    df = pd.DataFrame(rows, columns=COLUMNS)
    df["start"] = df["start"].astype("float64")
    return df
