"""Reading a Kineto trace: the Chrome/Perfetto JSON that ``torch.profiler`` exports (CUPTI
activity on a GPU), into one :class:`Trace` of pandas DataFrames — kernels, memory
operations, CUDA API calls and annotation ranges — with times in ns from the trace's origin.

Pure: reads a file, returns tables. The timeline questions are answered by
:mod:`kprof_mcp.analysis.timeline`; tested on traces recorded on an H100
(``tests/fixtures/h100_timeline``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Trace:
    """The events of one trace as DataFrames (times in ns from the trace's origin)."""

    kernels: (
        Any  # name, stream, device, start, dur, end, correlation, grid, block, regs, smem, blocks_per_sm, ...
    )
    memops: Any  # name, kind, stream, start, dur, end, bytes, correlation
    api: Any  # name, start, dur, end, correlation, tid
    ranges: Any  # name, start, dur, end, tid (CPU record_function / NVTX ranges)
    cpu_ops: Any
    num_sms: int | None
    device_name: str | None
    # Nsight Systems' GPU metrics samples (parsers/nsys_metrics.py), when the report has them; else None.
    gpu_metrics: Any = None
    # Nsight Systems' periodic Python samples (parsers/nsys_pysamples.py: start, tid, source, op), when
    # recorded with python_backtrace; else None.
    py_samples: Any = None


def _df(rows: list[dict[str, Any]], cols: list[str]):
    import pandas as pd

    return pd.DataFrame(rows, columns=cols)


# The columns of a Trace's kernels table, in order.
KERNEL_COLUMNS = [
    "name",
    "start",
    "dur",
    "end",
    "stream",
    "device",
    "correlation",
    "grid_blocks",
    "block_threads",
    "regs",
    "smem",
    "blocks_per_sm",
    "warps_per_sm",
    "occupancy_est_pct",
]


def load_trace(path: Path) -> Trace:
    """Parse a Kineto chrome trace (``torch.profiler ... export_chrome_trace``)."""
    data = json.loads(Path(path).read_text())
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    props = (data.get("deviceProperties") or [{}]) if isinstance(data, dict) else [{}]
    kernels, memops, api, ranges, cpu_ops, python = [], [], [], [], [], []
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        args = e.get("args") or {}
        start = float(e.get("ts", 0.0)) * 1e3
        dur = float(e.get("dur", 0.0)) * 1e3
        base = {"name": e.get("name", ""), "start": start, "dur": dur, "end": start + dur}
        if cat == "kernel":
            grid = args.get("grid") or [0, 0, 0]
            block = args.get("block") or [0, 0, 0]
            kernels.append(
                {
                    **base,
                    "stream": args.get("stream", e.get("tid")),
                    "device": args.get("device"),
                    "correlation": args.get("correlation"),
                    "grid_blocks": int(math.prod(grid)) if grid else None,
                    "block_threads": int(math.prod(block)) if block else None,
                    "regs": args.get("registers per thread"),
                    "smem": args.get("shared memory"),
                    "blocks_per_sm": args.get("blocks per SM"),
                    "warps_per_sm": args.get("warps per SM"),
                    "occupancy_est_pct": args.get("est. achieved occupancy %"),
                }
            )
        elif cat in ("gpu_memcpy", "gpu_memset"):
            memops.append(
                {
                    **base,
                    "kind": cat[4:],
                    "stream": args.get("stream", e.get("tid")),
                    "bytes": args.get("bytes"),
                    "correlation": args.get("correlation"),
                }
            )
        elif cat in ("cuda_runtime", "cuda_driver"):
            api.append({**base, "correlation": args.get("correlation"), "tid": e.get("tid")})
        elif cat == "user_annotation":
            ranges.append({**base, "tid": e.get("tid")})
        elif cat == "cpu_op":
            cpu_ops.append({**base, "tid": e.get("tid")})
        elif cat == "python_function":  # with_stack=True: each Python call, nested per thread
            python.append({**base, "tid": e.get("tid")})
    kcols = KERNEL_COLUMNS
    api_cols = ["name", "start", "dur", "end", "correlation", "tid"]
    if python and api:  # each CUDA call's Python line, as Nsight Systems' backtraces give it (.kineto_stacks)
        from .kineto_stacks import call_sources

        sources, ops = call_sources(python, api, cpu_ops)
        for row, src, op in zip(api, sources, ops):
            row["source"], row["op"] = src, op
        api_cols += ["source", "op"]
    return Trace(
        kernels=_df(kernels, kcols).sort_values("start", ignore_index=True),
        memops=_df(memops, ["name", "start", "dur", "end", "kind", "stream", "bytes", "correlation"]),
        api=_df(api, api_cols).sort_values("start", ignore_index=True),
        ranges=_df(ranges, ["name", "start", "dur", "end", "tid"]).sort_values("start", ignore_index=True),
        cpu_ops=_df(cpu_ops, ["name", "start", "dur", "end", "tid"]),
        num_sms=props[0].get("numSms") if props else None,
        device_name=props[0].get("name") if props else None,
    )
