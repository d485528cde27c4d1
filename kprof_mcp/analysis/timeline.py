"""Timeline analysis of a parsed trace (:class:`kprof_mcp.parsers.kineto.Trace`, the same
model whichever engine recorded it): one trace in, one summary per question out — kernel and
CUDA API summaries as ``nsys stats`` prints them, memory operations, NVTX/record_function
ranges per stage, stream overlap, launch order, GPU idle gaps, launch overhead, and waves.

Pure: computes and returns; nothing here reads files or touches a GPU. Times are ns.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any

from ..parsers import nsys_metrics
from ..parsers.kineto import Trace

RANGE_PREFIX = "kprof_"
ITER_RANGE = "kprof_iteration"
# Lean eager operations kprof issues after a command under Nsight Systems, timed in the trace itself
# (kprof_mcp/capture/op_floor.py; kprof_mcp/analysis/replay/floors.py reads them).
OP_FLOOR_RANGE = "kprof_op_floor"
# A CUDA graph built inside the loop: these calls, and the launches a thread makes while its stream captures
# (recorded into the graph, not run), are the graph's construction, a cost of the CUDA API; built once and
# replayed, they go (issue 36's seventh held-back set: a graph captured and instantiated every step).
CAPTURE_BEGIN = ("cudaStreamBeginCapture", "cuStreamBeginCapture")
CAPTURE_END = ("cudaStreamEndCapture", "cuStreamEndCapture")
GRAPH_BUILD_APIS = (
    *CAPTURE_BEGIN,
    *CAPTURE_END,
    "cudaGraphInstantiate",
    "cuGraphInstantiate",
    "cudaGraphExecDestroy",
    "cuGraphExecDestroy",
    "cudaGraphDestroy",
    "cuGraphDestroy",
)


def captured(names, tids) -> list[bool]:
    """For each CUDA call (in time order), whether its thread was capturing a stream into a graph when it
    was made (between a begin and an end of capture on that thread; the begin and end themselves too)."""
    on: dict = {}
    out = []
    for name, tid in zip(names, tids):
        name = str(name)
        if name.startswith(CAPTURE_BEGIN):
            on[tid] = True
            out.append(True)
        elif name.startswith(CAPTURE_END):
            on[tid] = False
            out.append(True)
        else:
            out.append(bool(on.get(tid)))
    return out


LAUNCH_APIS = (
    "cudaLaunchKernel",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cudaLaunchKernelExC",
    "cudaLaunchCooperativeKernel",
    "cudaGraphLaunch",
    "cuGraphLaunch",
)


def _union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _length(intervals: list[tuple[float, float]]) -> float:
    return sum(e - s for s, e in intervals)


def _intersect(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def _summary(df, key: str = "name") -> list[dict[str, Any]]:
    """``nsys stats``-style rows: time %, total, instances, avg, median, min, max, stddev (ns)."""
    if df.empty:
        return []
    g = df.groupby(key)["dur"]
    total = float(df["dur"].sum()) or 1.0
    rows = []
    for name, s in g:
        rows.append(
            {
                "name": name,
                "time_pct": 100.0 * float(s.sum()) / total,
                "total_ns": float(s.sum()),
                "instances": int(s.count()),
                "avg_ns": float(s.mean()),
                "med_ns": float(s.median()),
                "min_ns": float(s.min()),
                "max_ns": float(s.max()),
                "std_ns": float(s.std()) if s.count() > 1 else 0.0,
            }
        )
    return sorted(rows, key=lambda r: r["total_ns"], reverse=True)


@dataclass
class Timeline:
    """Every table of the timeline report, and the verdicts derived from them."""

    engine: str
    window_ns: float
    gpu_busy_ns: float
    kernel_summary: list[dict[str, Any]]
    api_summary: list[dict[str, Any]]
    memop_summary: list[dict[str, Any]]
    stages: list[dict[str, Any]]
    streams: list[dict[str, Any]]
    launch_order: list[dict[str, Any]]
    gaps: list[dict[str, Any]]
    launch: dict[str, Any]
    waves: list[dict[str, Any]]
    iterations: int
    iteration_span_ns: list[float] = field(default_factory=list)  # first kernel start to last kernel end
    notes: list[str] = field(default_factory=list)
    idle: dict[str, Any] = field(default_factory=dict)  # kprof_mcp.analysis.idle.IdleBreakdown.to_dict()

    @property
    def gpu_busy_pct(self) -> float | None:
        return 100.0 * self.gpu_busy_ns / self.window_ns if self.window_ns > 0 else None

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["gpu_busy_pct"] = self.gpu_busy_pct
        return d


def _stage_of(tr: Trace, stages: list[str]):
    """Map kernel correlation ids to stages: the launch API call lies inside a CPU range
    ``kprof_<stage>``. Returns (correlation -> stage, correlation -> iteration, launch rows)."""
    corr_stage: dict[Any, str] = {}
    corr_iter: dict[Any, int] = {}
    stage_ranges = [
        (r.start, r.end, r.name[len(RANGE_PREFIX) :])
        for r in tr.ranges.itertuples()
        if r.name.startswith(RANGE_PREFIX) and r.name[len(RANGE_PREFIX) :] in stages
    ]
    iters = [(r.start, r.end) for r in tr.ranges.itertuples() if r.name == ITER_RANGE]
    launches = tr.api[tr.api["name"].isin(LAUNCH_APIS)] if not tr.api.empty else tr.api
    for row in launches.itertuples():
        for s, e, name in stage_ranges:
            if s <= row.start <= e:
                corr_stage[row.correlation] = name
                break
        for i, (s, e) in enumerate(iters):
            if s <= row.start <= e:
                corr_iter[row.correlation] = i
                break
    return corr_stage, corr_iter, launches


def analyze(tr: Trace, stages: list[str], sm_count: int | None = None, top_gaps: int = 10) -> Timeline:
    """Answer every timeline question for the profiled iterations of a plan."""
    import pandas as pd

    sm_count = sm_count or tr.num_sms
    k = tr.kernels.copy()
    corr_stage, corr_iter, launches = _stage_of(tr, stages)
    k["stage"] = k["correlation"].map(corr_stage)
    k["iteration"] = k["correlation"].map(corr_iter)
    tr.kernels = k  # annotated with stage and iteration for the CSV and the picture
    n_iter = int(k["iteration"].max()) + 1 if k["iteration"].notna().any() else 0
    notes: list[str] = []
    if k.empty:
        notes.append("no GPU kernel in the trace: CPU activity only (no GPU, or the plan launched nothing)")
    gpu_iv = [(r.start, r.end) for r in k.itertuples()] + [(r.start, r.end) for r in tr.memops.itertuples()]
    busy = _union(gpu_iv)
    window = (busy[-1][1] - busy[0][0]) if busy else 0.0

    # Stages: per iteration GPU kernel time and CPU range time.
    stage_rows = []
    for s in stages:
        ks = k[k["stage"] == s]
        per_iter = ks.groupby("iteration")["dur"].sum() if not ks.empty else pd.Series(dtype=float)
        spans = (
            ks.groupby("iteration").agg(first=("start", "min"), last=("end", "max")) if not ks.empty else None
        )
        cpu = tr.ranges[tr.ranges["name"] == RANGE_PREFIX + s]["dur"]
        stage_rows.append(
            {
                "stage": s,
                "kernels_per_iteration": int(len(ks) / max(1, n_iter)) if n_iter else len(ks),
                "gpu_time_ns_median": float(per_iter.median()) if len(per_iter) else None,
                "gpu_time_ns_samples": [float(v) for v in per_iter.tolist()],
                "gpu_span_ns_median": float((spans["last"] - spans["first"]).median())
                if spans is not None
                else None,
                "gpu_span_ns_samples": [float(v) for v in (spans["last"] - spans["first"]).tolist()]
                if spans is not None
                else [],
                "cpu_range_ns_median": float(cpu.median()) if len(cpu) else None,
                "streams": sorted({str(x) for x in ks["stream"].unique()}) if not ks.empty else [],
            }
        )

    # Streams: busy time and how much of it overlaps any other stream.
    stream_rows = []
    by_stream = {
        str(sid): _union([(r.start, r.end) for r in g.itertuples()]) for sid, g in k.groupby("stream")
    }
    for sid, iv in by_stream.items():
        others = _union([x for o, v in by_stream.items() if o != sid for x in v])
        b = _length(iv)
        ov = _intersect(iv, others)
        stream_rows.append(
            {
                "stream": sid,
                "kernels": int((k["stream"].astype(str) == sid).sum()),
                "busy_ns": b,
                "overlap_ns": ov,
                "overlap_pct": 100.0 * ov / b if b > 0 else 0.0,
            }
        )

    # Launch order: the first launches of iteration 0 (host order vs device start order).
    order = []
    if not k.empty and not launches.empty:
        lk = launches.merge(
            k[["correlation", "name", "stream", "start", "dur", "stage", "iteration"]],
            on="correlation",
            suffixes=("_api", "_kernel"),
        )
        lk = lk[lk["iteration"].fillna(-1) == (0 if n_iter else -1)] if n_iter else lk
        lk = lk.sort_values("start_api").head(50)
        t0 = float(lk["start_api"].min()) if len(lk) else 0.0
        dev_rank = {c: i for i, c in enumerate(lk.sort_values("start_kernel")["correlation"])}
        for i, r in enumerate(lk.itertuples()):
            order.append(
                {
                    "launch": i,
                    "kernel": r.name_kernel,
                    "stage": r.stage,
                    "stream": str(r.stream),
                    "api": r.name_api,
                    "host_launch_at_ns": r.start_api - t0,
                    "api_ns": r.dur_api,
                    "gpu_start_at_ns": r.start_kernel - t0,
                    "queue_delay_ns": r.start_kernel - r.start_api,
                    "kernel_ns": r.dur_kernel,
                    "device_order": dev_rank[r.correlation],
                }
            )

    # Idle gaps between GPU activity, largest first, with what came before and after.
    gap_rows = []
    if busy:
        named = sorted(
            [(r.start, r.end, r.name) for r in k.itertuples()]
            + [(r.start, r.end, r.name) for r in tr.memops.itertuples()]
        )
        # The op that ended last before each gap and the first to start after it, by bisection (a scan
        # per gap was O(gaps x ops): minutes on a 50,000-kernel step). Ties go to the first in ``named``.
        starts = [n[0] for n in named]
        by_end = sorted(range(len(named)), key=lambda i: (named[i][1], i))
        ends = [named[i][1] for i in by_end]
        for (_s0, e0), (s1, _e1) in zip(busy, busy[1:]):
            p = bisect.bisect_right(ends, e0 + 1) - 1
            before = named[by_end[bisect.bisect_left(ends, ends[p])]] if p >= 0 else None
            q = bisect.bisect_left(starts, s1 - 1)
            after = named[q] if q < len(named) else None
            gap_rows.append(
                {
                    "at_ns": e0 - busy[0][0],
                    "gap_ns": s1 - e0,
                    "after": before[2] if before else None,
                    "before": after[2] if after else None,
                }
            )
        gap_rows.sort(key=lambda g: g["gap_ns"], reverse=True)

    # Launch overhead: host launch cost vs device time.
    launch: dict[str, Any] = {}
    if not k.empty and not launches.empty:
        api_med = float(launches["dur"].median())
        starts = launches["start"].sort_values().to_numpy()
        interval = float(pd.Series(starts).diff().dropna().median()) if len(starts) > 1 else None
        kmed = float(k["dur"].median())
        busy_pct = 100.0 * _length(busy) / window if window > 0 else None
        per_iter = len(launches) / max(1, n_iter) if n_iter else len(launches)
        # Several launches per iteration, the GPU mostly idle, kernels shorter than the gap
        # between launches: the host cannot feed the GPU.
        bound = bool(
            busy_pct is not None
            and busy_pct < 50.0
            and interval is not None
            and kmed < interval
            and per_iter > 1
        )
        launch = {
            "launch_api_median_ns": api_med,
            "launch_interval_median_ns": interval,
            "launches_per_iteration": per_iter,
            "kernel_median_ns": kmed,
            "launches": int(len(launches)),
            "gpu_busy_pct": busy_pct,
            "launch_bound": bound,
            "verdict": (
                "launch-bound: the GPU idles between kernels because each kernel runs for less time "
                "than the host needs to launch the next one"
                if bound
                else "not launch-bound: the GPU is kept busy"
            ),
        }

    # Waves: grid vs SMs; last-wave efficiency assumes one resident block per SM per wave slot
    # unless Kineto's blocks-per-SM figure says otherwise.
    wave_rows = []
    for name, g in k.groupby("name"):
        blocks = g["grid_blocks"].dropna()
        if blocks.empty or not sm_count:
            continue
        b = int(blocks.iloc[0])
        waves = b / sm_count
        frac = waves - math.floor(waves)
        last = 1.0 if frac == 0 else frac
        wave_rows.append(
            {
                "kernel": name,
                "grid_blocks": b,
                "sm_count": sm_count,
                "blocks_per_sm": waves,
                "full_waves": int(math.floor(waves)),
                "last_wave_efficiency": last if waves >= 1 else waves,
                "note": (
                    "fewer blocks than SMs: part of the GPU idles"
                    if waves < 1
                    else "partial last wave: SMs idle at the tail"
                    if frac and waves < 4
                    else ""
                ),
            }
        )
    return Timeline(
        engine="",
        window_ns=window,
        gpu_busy_ns=_length(busy),
        kernel_summary=nsys_metrics.with_activity(_summary(k), k, tr.gpu_metrics),
        api_summary=_summary(tr.api),
        memop_summary=_summary(tr.memops),
        stages=stage_rows,
        streams=stream_rows,
        launch_order=order,
        gaps=gap_rows[:top_gaps],
        launch=launch,
        waves=wave_rows,
        iterations=n_iter,
        iteration_span_ns=[
            float(r["last"] - r["first"])
            for _, r in k.groupby("iteration").agg(first=("start", "min"), last=("end", "max")).iterrows()
        ]
        if n_iter
        else [],
        notes=notes,
    )


def kernels_per_iteration(tr: Trace) -> tuple[list[float], list[float], list[dict[str, Any]]]:
    """Kernel time of each ``ITER_RANGE`` instance of a trace in which every range is one timed
    run (event mode): a kernel belongs to the run whose CPU range holds its launch call
    (correlation id), so work launched outside the ranges (the L2 flush) is left out.

    Returns (per-run sum of kernel durations, per-run span from first kernel start to last
    kernel end, per-kernel rows in first-launch order: name, launches per run, median per
    launch, median per run). Runs with no kernel are left out of the sums (the caller compares
    the count with the runs it made)."""
    import numpy as np

    iters = tr.ranges[tr.ranges["name"] == ITER_RANGE].sort_values("start")
    if iters.empty or tr.kernels.empty or tr.api.empty:
        return [], [], []
    launches = tr.api[tr.api["name"].isin(LAUNCH_APIS)]
    starts, ends = iters["start"].to_numpy(), iters["end"].to_numpy()
    idx = np.searchsorted(starts, launches["start"].to_numpy(), side="right") - 1
    inside = (idx >= 0) & (launches["start"].to_numpy() <= ends[np.clip(idx, 0, None)])
    corr_iter = dict(zip(launches["correlation"].to_numpy()[inside], idx[inside]))
    k = tr.kernels.assign(iteration=tr.kernels["correlation"].map(corr_iter)).dropna(subset=["iteration"])
    if k.empty:
        return [], [], []
    g = k.groupby("iteration")
    sums = [float(v) for v in g["dur"].sum().tolist()]
    spans = [float(v) for v in (g["end"].max() - g["start"].min()).tolist()]
    runs = k["iteration"].nunique()
    rows = []
    for name, kg in k.groupby("name", sort=False):
        rows.append(
            {
                "name": str(name),
                "launches_per_run": len(kg) / runs,
                "median_ns": float(kg["dur"].median()),
                "total_median_ns": float(kg.groupby("iteration")["dur"].sum().median()),
                "first": float(kg["start"].min()),
            }
        )
    rows.sort(key=lambda r: r.pop("first"))
    return sums, spans, rows


def iterations_window(tr: Trace) -> Trace:
    """The part of a trace that belongs to the recorded iterations (``ITER_RANGE`` ranges):
    CUDA API calls made between the first iteration's start and the last one's end, the kernels
    and memory operations those calls launched (by correlation id), and the ranges inside.

    Nsight Systems records the whole process (JIT, the correctness run, input generation,
    warm-up), so its trace must be cut to the iterations before any question is answered;
    Kineto's schedule already records only them, and the cut changes nothing there. A trace
    without iteration ranges is returned as it is."""
    iters = tr.ranges[tr.ranges["name"] == ITER_RANGE] if not tr.ranges.empty else tr.ranges
    if iters.empty:
        return tr
    return cut(tr, float(iters["start"].min()), float(iters["end"].max()))


def cut(tr: Trace, lo: float, hi: float) -> Trace:
    """The part of a trace between ``lo`` and ``hi`` (ns): API calls made then, the kernels and
    memory operations they launched (by correlation id), and the ranges and CPU ops inside."""

    def inside(df):
        return df[(df["start"] >= lo) & (df["start"] <= hi)] if not df.empty else df

    api = inside(tr.api)
    corr = set(api["correlation"].dropna().tolist()) if not api.empty else set()

    def launched(df):
        return df[df["correlation"].isin(corr)] if not df.empty else df

    return Trace(
        kernels=launched(tr.kernels).reset_index(drop=True),
        memops=launched(tr.memops).reset_index(drop=True),
        api=api.reset_index(drop=True),
        ranges=inside(tr.ranges).reset_index(drop=True),
        cpu_ops=inside(tr.cpu_ops).reset_index(drop=True),
        num_sms=tr.num_sms,
        device_name=tr.device_name,
        gpu_metrics=tr.gpu_metrics,
        py_samples=inside(tr.py_samples) if tr.py_samples is not None else None,
    )


def foreign_overlaps(tr: Trace) -> list[dict[str, Any]]:
    """Kernels that ran during the timed runs (``ITER_RANGE``) without being launched by them:
    another stream or thread's work overlapping the measurement (it may slow the runs down), or work
    a run started and left running outside its own window. Each: name, stream, how many, and how long
    they overlapped the runs' kernels (ns)."""
    iters = tr.ranges[tr.ranges["name"] == ITER_RANGE] if not tr.ranges.empty else tr.ranges
    if iters.empty or tr.kernels.empty or tr.api.empty:
        return []
    import numpy as np

    iters = iters.sort_values("start")
    launches = tr.api[tr.api["name"].isin(LAUNCH_APIS)]
    starts, ends = iters["start"].to_numpy(), iters["end"].to_numpy()
    at = launches["start"].to_numpy()
    idx = np.searchsorted(starts, at, side="right") - 1  # the last range starting at or before the launch
    inside = (idx >= 0) & (at <= ends[np.clip(idx, 0, None)])
    own_corr = set(launches["correlation"].to_numpy()[inside].tolist())
    k = tr.kernels
    own = k[k["correlation"].isin(own_corr)]
    other = k[~k["correlation"].isin(own_corr)]
    if own.empty or other.empty:
        return []
    busy = _union(list(zip(own["start"].astype(float), own["end"].astype(float))))
    busy_starts = [b[0] for b in busy]
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for name, stream, ks, ke in zip(other["name"], other["stream"], other["start"], other["end"]):
        first = max(0, bisect.bisect_right(busy_starts, float(ks)) - 1)  # busy intervals from here on
        ov = _intersect([(float(ks), float(ke))], busy[first:])
        if ov > 0:
            row = out.setdefault(
                (str(name), str(stream)),
                {"name": str(name), "stream": str(stream), "kernels": 0, "overlap_ns": 0.0},
            )
            row["kernels"] += 1
            row["overlap_ns"] += ov
    return sorted(out.values(), key=lambda d: -d["overlap_ns"])
