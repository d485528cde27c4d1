"""Reading Nsight Systems output: the SQLite file that ``nsys export --type sqlite`` writes,
into the same :class:`kprof_mcp.parsers.kineto.Trace` that a Kineto trace gives, so every
question of :mod:`kprof_mcp.analysis.timeline` is answered the same way whichever engine
recorded the timeline.

Tables read (each may be absent; a missing one gives an empty DataFrame with the right
columns): ``CUPTI_ACTIVITY_KIND_KERNEL`` (kernels), ``CUPTI_ACTIVITY_KIND_MEMCPY`` and
``CUPTI_ACTIVITY_KIND_MEMSET`` (memory operations), ``CUPTI_ACTIVITY_KIND_RUNTIME`` (CUDA runtime
and driver API calls, whose names lose nsys's ``_v<N>`` suffix: ``cudaLaunchKernel_v7000`` ->
``cudaLaunchKernel``), ``NVTX_EVENTS`` (push/pop and start/end ranges; marks are left out),
``StringIds`` (every name), ``TARGET_INFO_GPU`` (SM count, device name) and the
``ENUM_CUDA_MEMCPY_OPER`` / ``ENUM_CUDA_MEM_KIND`` labels. A recording with Python backtraces
(:mod:`.nsys_backtrace`) gives each API call its Python line and op (``source``, ``op`` columns). Times are ns as nsys recorded them
(from the start of the recording session, unless the export was time-normalised).

Also the pure halves of :mod:`kprof_mcp.tools.nsys`: which libraries ``ldd`` reports missing,
and the version ``nsys --version`` prints.

Pure: reads a file or a string, returns tables; no subprocess, no GPU. Tested on a recording
made on an H100 (``tests/fixtures/h100_nsys``).
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from . import nsys_backtrace, nsys_metrics, nsys_pysamples
from .kineto import KERNEL_COLUMNS, Trace

KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY_TABLE = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET_TABLE = "CUPTI_ACTIVITY_KIND_MEMSET"
RUNTIME_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"
NVTX_TABLE = "NVTX_EVENTS"
GPU_TABLE = "TARGET_INFO_GPU"
ACTIVITY_TABLES = (KERNEL_TABLE, MEMCPY_TABLE, MEMSET_TABLE, RUNTIME_TABLE, NVTX_TABLE)

NVTX_PUSH_POP = 59  # ENUM_NSYS_EVENT_TYPE NvtxPushPopRange
NVTX_START_END = 60  # NvtxStartEndRange
NVTX_RANGE_TYPES = (NVTX_PUSH_POP, NVTX_START_END)

MEMOP_COLS = ["name", "start", "dur", "end", "kind", "stream", "bytes", "correlation"]
API_COLS = ["name", "start", "dur", "end", "correlation", "tid"]
SOURCE_COLS = ["source", "op"]  # added to the API calls of a recording with Python backtraces
RANGE_COLS = ["name", "start", "dur", "end", "tid"]
CPU_OP_COLS = ["name", "start", "dur", "end", "tid"]

# CUPTI's enums, used when the export has no ENUM_* table (their values are fixed by CUPTI).
_MEMCPY_KINDS = {
    0: "CUDA_MEMCPY_KIND_UNKNOWN",
    1: "CUDA_MEMCPY_KIND_HTOD",
    2: "CUDA_MEMCPY_KIND_DTOH",
    3: "CUDA_MEMCPY_KIND_HTOA",
    4: "CUDA_MEMCPY_KIND_ATOH",
    5: "CUDA_MEMCPY_KIND_ATOA",
    6: "CUDA_MEMCPY_KIND_ATOD",
    7: "CUDA_MEMCPY_KIND_DTOA",
    8: "CUDA_MEMCPY_KIND_DTOD",
    9: "CUDA_MEMCPY_KIND_HTOH",
    10: "CUDA_MEMCPY_KIND_PTOP",
    11: "CUDA_MEMCPY_KIND_UVM_HTOD",
    12: "CUDA_MEMCPY_KIND_UVM_DTOH",
    13: "CUDA_MEMCPY_KIND_UVM_DTOD",
}
_MEM_KINDS = {
    0: "Pageable",
    1: "Pinned",
    2: "Device",
    3: "Array",
    4: "Managed",
    5: "Device Static",
    6: "Managed Static",
    7: "Unknown",
}

_VERSION_SUFFIX = re.compile(r"_v\d+$")


def api_name(name: str | None) -> str:
    """An nsys API name as Kineto and :data:`analysis.timeline.LAUNCH_APIS` spell it: the
    trailing ``_v<N>`` nsys adds is dropped (``cudaLaunchKernel_v7000`` -> ``cudaLaunchKernel``)."""
    return _VERSION_SUFFIX.sub("", name or "")


def memcpy_name(copy_kind: str | None, src: str | None = None, dst: str | None = None) -> str:
    """Kineto's name for a copy: ``CUDA_MEMCPY_KIND_DTOD``, Device, Device ->
    ``Memcpy DtoD (Device -> Device)``; ``Memcpy`` when the kind is unknown."""
    m = re.search(r"([A-Z])TO([A-Z])$", copy_kind or "")
    if not m:
        return "Memcpy"
    name = f"Memcpy {m.group(1)}to{m.group(2)}"
    return f"{name} ({src} -> {dst})" if src and dst else name


# ----------------------------------------------------------------------------- SQLite export


def process_id(global_id: int | None) -> int | None:
    """The process id in nsys's ``globalPid`` / ``globalTid`` (bits 24-47; the VM's above, a thread's below)."""
    return None if global_id is None else (int(global_id) >> 24) & 0xFFFFFF


def _tables(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in con.execute(f'PRAGMA table_info("{table}")')}


def _enum(
    con: sqlite3.Connection, tables: set[str], table: str, column: str, fallback: dict[int, str]
) -> dict:
    if table in tables and {"id", column} <= _columns(con, table):
        return {int(i): v for i, v in con.execute(f'SELECT id, "{column}" FROM "{table}"')}
    return dict(fallback)


def _is_nsys_export(con: sqlite3.Connection, tables: set[str]) -> bool:
    if tables & set(ACTIVITY_TABLES):
        return True
    # An export of a run with no CUDA and no NVTX activity still says who wrote it.
    if "META_DATA_EXPORT" in tables and {"name", "value"} <= _columns(con, "META_DATA_EXPORT"):
        row = con.execute("SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_PRODUCT_NAME'").fetchone()
        return bool(row and "Nsight Systems" in str(row[0]))
    return False


def _frame(rows: list[dict[str, Any]], cols: list[str]):
    import pandas as pd

    df = pd.DataFrame(rows, columns=cols)
    for c in ("start", "dur", "end"):
        df[c] = df[c].astype("float64")  # as kineto.load_trace: float ns
    return df.sort_values("start", kind="stable", ignore_index=True)


def _prod(*dims: int | None) -> int | None:
    return None if any(d is None for d in dims) else int(dims[0] * dims[1] * dims[2])


def _kernels(con, tables, strings) -> list[dict[str, Any]]:
    if KERNEL_TABLE not in tables:
        return []
    cols = _columns(con, KERNEL_TABLE)

    def col(name: str, default: str = "NULL") -> str:
        return f'"{name}"' if name in cols else default

    sql = (
        f"SELECT start, \"end\", {col('streamId')}, {col('deviceId')}, {col('correlationId')}, "
        f"{col('demangledName')}, {col('shortName')}, {col('gridX')}, {col('gridY')}, {col('gridZ')}, "
        f"{col('blockX')}, {col('blockY')}, {col('blockZ')}, {col('registersPerThread')}, "
        f"{col('staticSharedMemory')}, {col('dynamicSharedMemory')}, {col('globalPid')} FROM {KERNEL_TABLE}"
    )
    rows = []
    for (
        start,
        end,
        stream,
        device,
        corr,
        demangled,
        short,
        gx,
        gy,
        gz,
        bx,
        by,
        bz,
        regs,
        ssmem,
        dsmem,
        gpid,
    ) in con.execute(sql):
        rows.append(
            {
                "name": strings.get(demangled) or strings.get(short) or "",
                "start": start,
                "dur": end - start,
                "end": end,
                "stream": stream,
                "device": device,
                "correlation": corr,
                "grid_blocks": _prod(gx, gy, gz),
                "block_threads": _prod(bx, by, bz),
                "regs": regs,
                "smem": (ssmem or 0) + (dsmem or 0) if ssmem is not None or dsmem is not None else None,
                "blocks_per_sm": None,
                "warps_per_sm": None,
                "occupancy_est_pct": None,
                "pid": process_id(gpid),  # not a column of the Trace: nsys_processes splits by it
            }
        )
    return rows


def _memops(con, tables) -> list[dict[str, Any]]:
    rows = []
    mem_kinds = _enum(con, tables, "ENUM_CUDA_MEM_KIND", "label", _MEM_KINDS)
    if MEMCPY_TABLE in tables:
        cols = _columns(con, MEMCPY_TABLE)
        copy_kinds = _enum(con, tables, "ENUM_CUDA_MEMCPY_OPER", "name", _MEMCPY_KINDS)
        sel = ", ".join(
            f'"{c}"' if c in cols else "NULL"
            for c in ("streamId", "bytes", "correlationId", "copyKind", "srcKind", "dstKind", "globalPid")
        )
        for start, end, stream, nbytes, corr, ck, sk, dk, gpid in con.execute(
            f'SELECT start, "end", {sel} FROM {MEMCPY_TABLE}'
        ):
            name = memcpy_name(copy_kinds.get(ck), mem_kinds.get(sk), mem_kinds.get(dk))
            rows.append(
                {
                    "name": name,
                    "start": start,
                    "dur": end - start,
                    "end": end,
                    "kind": "memcpy",
                    "stream": stream,
                    "bytes": nbytes,
                    "correlation": corr,
                    "pid": process_id(gpid),
                }
            )
    if MEMSET_TABLE in tables:
        cols = _columns(con, MEMSET_TABLE)
        sel = ", ".join(
            f'"{c}"' if c in cols else "NULL"
            for c in ("streamId", "bytes", "correlationId", "memKind", "globalPid")
        )
        for start, end, stream, nbytes, corr, mk, gpid in con.execute(
            f'SELECT start, "end", {sel} FROM {MEMSET_TABLE}'
        ):
            rows.append(
                {
                    "name": f"Memset ({mem_kinds.get(mk) or 'Device'})",
                    "start": start,
                    "dur": end - start,
                    "end": end,
                    "kind": "memset",
                    "stream": stream,
                    "bytes": nbytes,
                    "correlation": corr,
                    "pid": process_id(gpid),
                }
            )
    return rows


def _api(con, tables, strings, sources: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """The CUDA API calls; a recording with backtraces repeats each backtraced call as a row of its
    own event class (:mod:`.nsys_backtrace`), left out here. With ``sources``, each call's Python
    line and op (None where it has none)."""
    if RUNTIME_TABLE not in tables:
        return []
    cols = _columns(con, RUNTIME_TABLE)
    sel = ", ".join(f'"{c}"' if c in cols else "NULL" for c in ("correlationId", "nameId", "globalTid"))
    where = ""
    if "eventClass" in cols and "callchainId" in cols:
        where = f" WHERE eventClass != {nsys_backtrace.backtrace_class(con, tables)}"
    rows = []
    names: dict[Any, str] = {}  # api_name once per name id, not once per call
    for start, end, corr, name_id, tid in con.execute(
        f'SELECT start, "end", {sel} FROM {RUNTIME_TABLE}{where}'
    ):
        name = names.get(name_id)
        if name is None:
            name = names[name_id] = api_name(strings.get(name_id))
        row = {
            "name": name,
            "start": start,
            "dur": end - start,
            "end": end,
            "correlation": corr,
            "tid": tid,
            "pid": process_id(tid),
        }
        if sources:
            src = sources.get(corr) or {}
            row["source"], row["op"] = src.get("source"), src.get("op")
        rows.append(row)
    if sources:
        _inherit_sources(rows)
    return rows


# A call nsys did not backtrace belongs to the backtraced call that follows it this soon on its
# thread (PyTorch loads a kernel's library, cuLibraryLoadData, just before it launches it).
INHERIT_NEXT_NS = 100_000


def _inherit_sources(rows: list[dict[str, Any]]) -> None:
    """A call nsys did not backtrace (driver calls, ``cudaStreamIsCapturing``) takes the line and op
    of the backtraced call around it on its thread, else of the one that starts within
    :data:`INHERIT_NEXT_NS` after it ends (the op it prepared: a first launch's ``cuLibraryLoadData``)."""
    import bisect

    by_tid: dict[Any, list[dict[str, Any]]] = {}
    for r in rows:
        if r["source"] is not None:
            by_tid.setdefault(r["tid"], []).append(r)
    for lined in by_tid.values():
        lined.sort(key=lambda r: r["start"])
    starts = {tid: [r["start"] for r in lined] for tid, lined in by_tid.items()}
    for r in rows:
        if r["source"] is not None or r["tid"] not in by_tid:
            continue
        lined, at = by_tid[r["tid"]], starts[r["tid"]]
        i = bisect.bisect_right(at, r["start"]) - 1
        if i >= 0 and lined[i]["end"] >= r["end"]:
            r["source"], r["op"] = lined[i]["source"], lined[i]["op"]
        elif i + 1 < len(lined) and lined[i + 1]["start"] - r["end"] <= INHERIT_NEXT_NS:
            r["source"], r["op"] = lined[i + 1]["source"], lined[i + 1]["op"]


def _ranges(con, tables, strings) -> list[dict[str, Any]]:
    if NVTX_TABLE not in tables:
        return []
    cols = _columns(con, NVTX_TABLE)
    sel = ", ".join(f'"{c}"' if c in cols else "NULL" for c in ("text", "textId", "globalTid", "domainId"))
    types = ", ".join(str(t) for t in NVTX_RANGE_TYPES)
    rows = []
    for start, end, text, text_id, tid, domain in con.execute(
        f'SELECT start, "end", {sel} FROM {NVTX_TABLE} WHERE eventType IN ({types}) AND "end" IS NOT NULL'
    ):
        rows.append(
            {
                "name": text if text is not None else strings.get(text_id, ""),
                "start": start,
                "dur": end - start,
                "end": end,
                "tid": tid,
                "pid": process_id(tid),
                "domain": domain,
            }
        )
    return rows


def _gpu(con, tables, kernels: list[dict[str, Any]]) -> tuple[int | None, str | None]:
    if GPU_TABLE not in tables:
        return None, None
    cols = _columns(con, GPU_TABLE)
    sel = ", ".join(f'"{c}"' if c in cols else "NULL" for c in ("id", "smCount", "name"))
    gpus = con.execute(f"SELECT {sel} FROM {GPU_TABLE}").fetchall()
    if not gpus:
        return None, None
    devices = [k["device"] for k in kernels if k["device"] is not None]
    used = max(set(devices), key=devices.count) if devices else None
    _, sms, name = next((g for g in gpus if g[0] == used), gpus[0])
    return (int(sms) if sms is not None else None), name


def _correlation_per_process(*tables: list[dict[str, Any]]) -> None:
    """Make the correlation ids of a report of several processes (the ranks of a multi-GPU job) unique:
    CUPTI numbers each process's calls from 1, so the same id names a call of each rank, and a join on it
    alone gave one rank's kernels to the other rank's calls (the replay then bound rank 1's kernels to
    rank 0's host). With more than one process, an id becomes ``k << 32 | id``, ``k`` the process's place
    among the report's processes (1, 2, ...; small, so the id stays exact in a float column); one process
    keeps its own ids. ``id >> 32`` is then the process an operation belongs to (:func:`process_of`)."""
    pids = sorted({r.get("pid") for rows in tables for r in rows if r.get("pid") is not None})
    if len(pids) < 2:
        return
    place = {p: k for k, p in enumerate(pids, 1)}
    for rows in tables:
        for r in rows:
            if r.get("pid") is not None and r.get("correlation") is not None:
                r["correlation"] = (place[r["pid"]] << 32) | int(r["correlation"])


def process_of(correlation: Any) -> int:
    """The place of the process a correlation id belongs to in a report of several processes (0 in a
    report of one, or without an id): stream ids are numbered per process too."""
    try:
        return int(correlation) >> 32
    except (TypeError, ValueError):
        return 0


def load_sqlite(path: Path) -> Trace:
    """Parse an ``nsys export --type sqlite`` file into a :class:`Trace` (kernels, memory
    operations, CUDA API calls, NVTX ranges, GPU metrics samples where recorded; no CPU ops), times in ns.

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` (naming the file) for
    one that is not SQLite or holds none of Nsight Systems' tables."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no Nsight Systems SQLite export at {path}")
    try:
        con = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise ValueError(f"{path} cannot be opened as SQLite ({e})") from None
    try:
        try:
            tables = _tables(con)
        except sqlite3.DatabaseError as e:
            raise ValueError(
                f"{path} is not an Nsight Systems SQLite export: not an SQLite database ({e})"
            ) from None
        if not _is_nsys_export(con, tables):
            raise ValueError(
                f"{path} is not an Nsight Systems SQLite export: no table {KERNEL_TABLE} or "
                f"{NVTX_TABLE} (nor any other CUDA activity table); make it with "
                "`nsys export --type sqlite`"
            )
        try:
            strings = dict(con.execute("SELECT id, value FROM StringIds")) if "StringIds" in tables else {}
            kernels = _kernels(con, tables, strings)
            memops = _memops(con, tables)
            sources = nsys_backtrace.sources(con, tables, strings)
            py_samples = nsys_pysamples.load(con, tables, strings)  # with backtraces or without
            api = _api(con, tables, strings, sources)
            ranges = _ranges(con, tables, strings)
            num_sms, device_name = _gpu(con, tables, kernels)
            samples = nsys_metrics.load(con, tables)
            _correlation_per_process(kernels, memops, api)
        except sqlite3.Error as e:
            raise ValueError(f"{path}: cannot read the Nsight Systems export ({e})") from None
    finally:
        con.close()
    return Trace(
        kernels=_frame(kernels, KERNEL_COLUMNS),  # the columns, in the order, load_trace gives
        memops=_frame(memops, MEMOP_COLS),
        api=_frame(api, API_COLS + (SOURCE_COLS if sources else [])),
        ranges=_frame(ranges, RANGE_COLS),
        cpu_ops=_frame([], CPU_OP_COLS),
        num_sms=num_sms,
        device_name=device_name,
        gpu_metrics=samples,
        py_samples=nsys_pysamples.frame(py_samples) if py_samples else None,
    )


# ----------------------------------------------------------------------------- program output

_LDD_MISSING = re.compile(r"^\s*(\S+)\s+=>\s+not found\s*$", re.MULTILINE)


def parse_ldd_missing(text: str) -> list[str]:
    """The sonames ``ldd`` reports ``not found``, in the order printed, each once."""
    out: list[str] = []
    for m in _LDD_MISSING.finditer(text or ""):
        if m.group(1) not in out:
            out.append(m.group(1))
    return out


def parse_version(text: str) -> str | None:
    """The number in ``nsys --version``'s line: ``NVIDIA Nsight Systems version
    2025.3.1.90-253135822126v0`` -> ``2025.3.1.90``; ``None`` when there is none."""
    m = re.search(r"Nsight Systems version\s+(\d+(?:\.\d+)+)", text or "", re.IGNORECASE)
    if not m:
        m = re.search(r"\bversion\s+(\d+(?:\.\d+)+)", text or "", re.IGNORECASE)
    return m.group(1) if m else None
