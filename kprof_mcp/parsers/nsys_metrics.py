"""Nsight Systems' GPU metrics samples (``nsys profile --gpu-metrics-devices``) from its SQLite export, and
what each kernel of a trace did while it ran.

The sampler reads a set of the GPU's performance counters at a fixed rate (10 kHz by default) without
replaying kernels: ``TARGET_INFO_GPU_METRICS`` names each metric (``metricId`` → ``metricName``, per GPU
``typeId``), ``GPU_METRICS`` holds the samples (``timestamp`` in the same ns as the kernels' start and end,
``typeId``, ``metricId``, ``value``). The metrics read here are throughputs as % of the unit's peak over the
sample's interval (the ``gh100`` set's names; earlier sets name them alike):

* ``dram_read_pct``, ``dram_write_pct`` — DRAM read / write bandwidth;
* ``issue_pct`` — SM issue: instructions issued over the SMs' issue slots;
* ``warps_pct`` — compute warps in flight over the SMs' warp slots;
* ``tensor_pct`` — tensor pipe activity;
* ``sms_active_pct`` — SMs with at least one warp resident.

A sample covers the whole GPU: kernels running side by side on several streams share their samples.

Pure: the connection in, a DataFrame out. Times are ns."""

from __future__ import annotations

import sqlite3
from typing import Any

# The metrics kept (their names in TARGET_INFO_GPU_METRICS) and the column each becomes.
METRICS = {
    "DRAM Read Bandwidth [Throughput %]": "dram_read_pct",
    "DRAM Write Bandwidth [Throughput %]": "dram_write_pct",
    "SM Issue [Throughput %]": "issue_pct",
    "Compute Warps in Flight [Throughput %]": "warps_pct",
    "Tensor Active [Throughput %]": "tensor_pct",
    "SMs Active [Throughput %]": "sms_active_pct",
}
COLUMNS = ["timestamp", *METRICS.values()]


def load(con: sqlite3.Connection, tables: set[str]) -> Any | None:
    """One row per sample time (``timestamp`` ascending) with a column per metric of :data:`METRICS` the export
    holds; None when it holds no GPU metrics, or samples of several GPUs (which GPU a kernel ran on is not
    matched to the sampler's ``typeId``: not read rather than mixed)."""
    if not {"GPU_METRICS", "TARGET_INFO_GPU_METRICS"} <= tables:
        return None
    import pandas as pd

    info = con.execute("SELECT DISTINCT typeId, metricId, metricName FROM TARGET_INFO_GPU_METRICS").fetchall()
    wanted = {(t, m): METRICS[n] for t, m, n in info if n in METRICS}
    types = {t for t, _ in wanted}
    if len(types) != 1:
        return None
    ids = sorted(m for _, m in wanted)
    marks = ",".join("?" * len(ids))
    rows = con.execute(
        f"SELECT timestamp, metricId, value FROM GPU_METRICS WHERE metricId IN ({marks})", ids
    ).fetchall()
    if not rows:
        return None
    long = pd.DataFrame(rows, columns=["timestamp", "metricId", "value"])
    (t,) = types
    long["metric"] = long["metricId"].map({m: c for (tt, m), c in wanted.items() if tt == t})
    wide = long.pivot_table(index="timestamp", columns="metric", values="value", aggfunc="mean")
    wide = wide.reset_index().sort_values("timestamp")
    return wide.reindex(columns=[c for c in COLUMNS if c == "timestamp" or c in wide.columns])


def kernel_activity(kernels: Any, samples: Any) -> dict[str, dict[str, float]]:
    """Per kernel name, the mean of each metric over the samples taken while one of its instances ran
    (``kernels``: a Trace's kernels table, or part of it; ``samples``: :func:`load`'s), and how many samples
    that is. Names with no sample inside (kernels shorter than the sampling interval) are left out."""
    import numpy as np

    if samples is None or kernels is None or len(samples) == 0 or len(kernels) == 0:
        return {}
    ts = samples["timestamp"].to_numpy(dtype=float)
    cols = [c for c in samples.columns if c != "timestamp"]
    values = samples[cols].to_numpy(dtype=float)
    out: dict[str, dict[str, float]] = {}
    for name, g in kernels.groupby("name"):
        lo = np.searchsorted(ts, g["start"].to_numpy(dtype=float), side="left")
        hi = np.searchsorted(ts, g["end"].to_numpy(dtype=float), side="right")
        idx = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi)]) if len(lo) else np.array([], int)
        idx = np.unique(idx)
        if not len(idx):
            continue
        means = np.nanmean(values[idx], axis=0)
        out[str(name)] = {c: round(float(v), 2) for c, v in zip(cols, means) if v == v}
        out[str(name)]["samples"] = float(len(idx))
    return out


def with_activity(rows: list[dict[str, Any]], kernels: Any, samples: Any) -> list[dict[str, Any]]:
    """Kernel summary rows (``name`` keyed, as analysis/timeline's) with ``activity``: :func:`kernel_activity`'s
    figures for that name, where the trace has samples inside its instances."""
    act = kernel_activity(kernels, samples)
    return [{**r, "activity": act[r["name"]]} if r.get("name") in act else r for r in rows]
