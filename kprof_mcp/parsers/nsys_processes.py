"""One Nsight Systems report, split by process (issue 39): Nsight Systems follows the process tree
(``torch.multiprocessing.spawn``'s ranks, torchrun's workers) and records every process in one
report; each row of its activity tables names its process (``globalPid``, or the thread's
``globalTid``: :func:`kprof_mcp.parsers.nsys.process_id`).

:func:`load_processes` gives one :class:`~kprof_mcp.parsers.kineto.Trace` per process that launched
a kernel (its kernels, memory operations, CUDA calls and NVTX ranges), with what tells the processes
apart: the CUDA devices each ran kernels on (as the process numbers them, from
``TARGET_INFO_CUDA_DEVICE``; the GPU's id without it), its first CUDA call, its name (``PROCESSES``)
and the session's start on the wall clock (``TARGET_INFO_SESSION_START_TIME``: every process's
times are on that one clock). NCCL's own NVTX ranges (its ``NCCL`` domain: ``ncclAllReduce``,
``ncclCommInitRankConfig``) are renamed ``nccl:<name>``, as torch names its ranges around NCCL's
collectives: communication, never a user's stage. None for a report with fewer than two such
processes: a single-process run is read as before (:func:`kprof_mcp.parsers.nsys.load_sqlite`).

Nsight Systems' export holds no process's environment (``TARGET_INFO_SYSTEM_ENV`` is the
launcher's, ``PROCESSES`` a pid and a name) and NCCL's NVTX payloads (communicator, rank) are not
exported: the rank is found from the devices and the order above (:mod:`kprof_mcp.analysis.nsys_ranks`).

Pure: reads a file, returns tables; tested on a recording of a 2-rank NCCL job on 2 x H100
(``tests/fixtures/gpu_ranks_nccl_nsys``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import nsys
from .kineto import KERNEL_COLUMNS, Trace

NVTX_DOMAIN_CREATE = 75  # ENUM_NSYS_EVENT_TYPE NvtxDomainCreate: the domain's name in ``text``
NCCL_DOMAIN = "NCCL"
NCCL_RANGE_PREFIX = "nccl:"


@dataclass
class ProcessTrace:
    """One process of the report that launched a kernel."""

    pid: int
    name: str
    trace: Trace
    devices: list[int] = field(default_factory=list)  # CUDA devices it ran kernels on (its numbering)
    first_cuda_ns: float | None = None  # its first CUDA call (session ns)
    last_ns: float | None = None  # the end of its last recorded activity (session ns)
    kernels: int = 0


@dataclass
class Processes:
    processes: list[ProcessTrace]  # by pid
    origin_ns: int | None  # the session's start on the wall clock (epoch ns)


def kernel_processes(con: sqlite3.Connection, tables: set[str]) -> list[int]:
    """The processes that launched a kernel."""
    if nsys.KERNEL_TABLE not in tables or "globalPid" not in nsys._columns(con, nsys.KERNEL_TABLE):
        return []
    rows = con.execute(f"SELECT DISTINCT globalPid FROM {nsys.KERNEL_TABLE} WHERE globalPid IS NOT NULL")
    return sorted({nsys.process_id(g) for (g,) in rows})  # type: ignore[misc]


def load_processes(path: Path) -> Processes | None:
    """Every kernel-launching process's trace (see the module docstring); None for fewer than two.
    Raises ``ValueError`` for a file that cannot be read as an Nsight Systems export."""
    try:
        con = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise ValueError(f"{path} cannot be opened as SQLite ({e})") from None
    try:
        tables = nsys._tables(con)
        pids = kernel_processes(con, tables)
        if len(pids) < 2:
            return None
        strings = dict(con.execute("SELECT id, value FROM StringIds")) if "StringIds" in tables else {}
        kernels = nsys._kernels(con, tables, strings)
        memops = nsys._memops(con, tables)
        api = nsys._api(con, tables, strings, {})
        ranges = _rename_nccl(nsys._ranges(con, tables, strings), _nccl_domains(con, tables))
        num_sms, device_name = nsys._gpu(con, tables, kernels)
        cuda_ids = _cuda_ids(con, tables)
        names = _names(con, tables)
        origin = _origin(con, tables)
    except sqlite3.Error as e:
        raise ValueError(f"{path}: cannot read the Nsight Systems export ({e})") from None
    finally:
        con.close()

    def mine(rows: list[dict[str, Any]], pid: int) -> list[dict[str, Any]]:
        return [r for r in rows if r.get("pid") == pid]

    out = []
    for pid in pids:
        ks, calls = mine(kernels, pid), mine(api, pid)
        devices = sorted(
            {cuda_ids.get((pid, k["device"]), k["device"]) for k in ks if k["device"] is not None}
        )
        trace = Trace(
            kernels=nsys._frame(ks, KERNEL_COLUMNS),
            memops=nsys._frame(mine(memops, pid), nsys.MEMOP_COLS),
            api=nsys._frame(calls, nsys.API_COLS),
            ranges=nsys._frame(mine(ranges, pid), nsys.RANGE_COLS),
            cpu_ops=nsys._frame([], nsys.CPU_OP_COLS),
            num_sms=num_sms,
            device_name=device_name,
        )
        out.append(
            ProcessTrace(
                pid=pid,
                name=names.get(pid, ""),
                trace=trace,
                devices=devices,
                first_cuda_ns=min((float(c["start"]) for c in calls), default=None),
                last_ns=max(
                    (float(r["end"]) for df in (ks, calls, mine(memops, pid)) for r in df), default=None
                ),
                kernels=len(ks),
            )
        )
    return Processes(out, origin)


def _nccl_domains(con, tables) -> set[int]:
    if nsys.NVTX_TABLE not in tables or not {"domainId", "text"} <= nsys._columns(con, nsys.NVTX_TABLE):
        return set()
    rows = con.execute(
        f"SELECT DISTINCT domainId FROM {nsys.NVTX_TABLE} WHERE eventType = ? AND text = ?",
        (NVTX_DOMAIN_CREATE, NCCL_DOMAIN),
    )
    return {int(d) for (d,) in rows if d is not None}


def _rename_nccl(ranges: list[dict[str, Any]], domains: set[int]) -> list[dict[str, Any]]:
    for r in ranges:
        if r.get("domain") in domains and not str(r["name"]).startswith(NCCL_RANGE_PREFIX):
            r["name"] = NCCL_RANGE_PREFIX + str(r["name"])
    return ranges


def _cuda_ids(con, tables) -> dict[tuple[int, int], int]:
    """(pid, GPU id) -> the CUDA device number the process gave it."""
    t = "TARGET_INFO_CUDA_DEVICE"
    if t not in tables or not {"gpuId", "cudaId", "pid"} <= nsys._columns(con, t):
        return {}
    return {(int(p), int(g)): int(c) for g, c, p in con.execute(f"SELECT gpuId, cudaId, pid FROM {t}")}


def _names(con, tables) -> dict[int, str]:
    if "PROCESSES" not in tables or not {"pid", "name"} <= nsys._columns(con, "PROCESSES"):
        return {}
    return {int(p): str(n or "") for p, n in con.execute("SELECT pid, name FROM PROCESSES")}


def _origin(con, tables) -> int | None:
    t = "TARGET_INFO_SESSION_START_TIME"
    if t not in tables or "utcEpochNs" not in nsys._columns(con, t):
        return None
    row = con.execute(f"SELECT utcEpochNs FROM {t}").fetchone()
    return int(row[0]) if row and row[0] is not None else None
