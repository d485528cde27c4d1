"""Timelines by replay (issue 36): the recorded run as a dependency graph, re-timed with a cause
removed. The gain of a cause is the recorded span over the replayed span, minus one: a what-if
computed on the run's own events, with no share fitted on calibration pairs.

The graph (:func:`build`), from a :class:`~kprof_mcp.parsers.kineto.Trace` and a window:

* **host**: per host thread, its CUDA API calls in order, each with the host time spent outside
  CUDA before it (``gap``: Python, the dispatcher, the user's own work) and its own duration.
* **GPU operations**: each launch, copy or memset call's kernel/copy/memset on its stream. An
  operation starts at the latest of (its call's start + an issue latency, the previous operation
  on its stream's end + a gap, and, after a ``cudaStreamWaitEvent``, the end of the other stream's
  operation it waited for). Which of these bound it is read from the recording; the bound one
  keeps its recorded offset, the others their floors (the smallest issue latency and stream gap
  seen in the window), so an identity replay gives back every recorded start exactly.
* **waits**: a synchronising call (stream/device/event synchronise, ``cudaFree``, a blocking
  copy: pageable, or the synchronous ``cudaMemcpy``) covers, per stream, the last operation issued
  before it that had ended when it returned. Replayed, it returns ``ret`` after the latest of its
  start and its covered operations' new ends, ``ret`` being the host time it spent after the wait
  (all of it when it did not wait).

:func:`replay` re-times a graph by one forward pass in recorded order (every dependency points to
something recorded earlier: a discrete-event simulation with no queue to keep). The transforms,
one per idle cause of :mod:`kprof_mcp.analysis.idle` (:data:`TRANSFORMS`), each return a changed
copy of the graph:

* ``sync`` — :func:`drop_syncs`: every wait but the window's last returns without waiting (the
  value stays on the GPU; the last read is the one the host needs).
* ``cuda_api`` — :func:`reuse_allocations`: ``cudaMalloc``/``cudaFree``/``cudaHostAlloc`` (and
  their driver forms) cost nothing: buffers are allocated once and reused.
* ``copy`` — :func:`pin_copies`: a pageable host-to-device copy becomes an asynchronous copy from
  pinned memory on a copy engine, prefetched a step ahead (its stream no longer waits for it): its
  GPU time is its bytes at the pinned bandwidth (the fastest pinned copy of 1 MiB or more in the
  trace, else :func:`pcie_bytes_per_s`), its host call costs a launch.
* ``launch`` — :func:`graph_launches`: a CUDA graph: each launch and memset call costs the measured
  launch floor (the window's fastest launch call), the other cheap calls and the dispatcher time
  between them (host stretches under ``HOST_WORK_MIN_NS``) nothing, and operations follow each
  other on their stream with no gap.
* ``host`` — :func:`host_ahead`: the host's own stretches (``HOST_WORK_MIN_NS`` or longer) run on
  workers ahead of the loop, or on the GPU: they leave the critical path. Not those that follow a
  read of the GPU's values (a synchronise, a device-to-host copy) before the GPU is fed again: that
  idle stretch is the sync's (idle.py gives it to ``sync``), and :func:`drop_syncs` overlaps it.
* ``first_call`` — :func:`skip_first_calls`: module loading and first launches cost what a launch
  costs.

Not modelled: the launch queue's depth (a host that runs far ahead is not stopped after ~1,000
pending launches), arguments the trace does not record (which stream a synchronise names: the
covered operations stand for it), and a fix that changes the GPU's own work (fusion).

Pure: tables in, numbers out. Times are ns.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ..devices import DEFAULT_MIN_KERNEL_NS
from ..parsers.kineto import Trace
from .idle import FIRST_CALL_PREFIXES, FIRST_LAUNCH_MIN_NS, FIRST_LAUNCH_X, HOST_WORK_MIN_NS, SYNC_APIS
from .timeline import LAUNCH_APIS, _union

ALLOC_APIS = (
    "cudaMalloc",
    "cudaFree",
    "cudaHostAlloc",
    "cudaMallocHost",
    "cudaFreeHost",
    "cuMemAlloc",
    "cuMemFree",
    "cuMemHostAlloc",
    "cuMemFreeHost",
)
# cudaFree synchronises the device before it returns the memory (CUDA runtime API documentation,
# "API synchronization behavior"); cudaMalloc does not.
IMPLICIT_SYNC_APIS = ("cudaFree", "cuMemFree", "cudaFreeHost", "cuMemFreeHost")
MIB = 1 << 20


@dataclass
class Op:
    """A GPU operation: kernel, copy or memset, and the offsets that place it (see the module docstring)."""

    call: int
    stream: Any
    dur: float
    kind: str  # kernel | memcpy | memset
    name: str
    nbytes: float
    start: float  # recorded
    end: float  # recorded
    issue: float  # offset after its call's start it may start at (recorded when the host bound it)
    gap: float  # offset after the previous op on its stream's end
    dep: int | None = None  # an op of another stream it waited for (cudaStreamWaitEvent)
    lag: float = 0.0  # offset after that op's end
    prev: int | None = None  # the previous op on its stream


@dataclass
class Call:
    """A CUDA API call of one host thread."""

    tid: Any
    name: str
    start: float  # recorded
    end: float  # recorded
    gap: float  # host time outside CUDA before it on its thread
    dur: float  # its duration when it does not wait
    kind: str  # launch | memset | copy | sync | alloc | first | other
    ops: list[int] = field(default_factory=list)
    covers: list[int] = field(default_factory=list)  # ops it waits for
    ret: float = 0.0  # host time after its wait (all of dur when it did not wait)


@dataclass
class Graph:
    """The recorded run of a window as a dependency graph."""

    lo: float
    hi: float
    calls: list[Call]
    ops: list[Op]
    tails: dict[Any, float]  # per thread, host time after its last call until the window's end
    occurrences: int
    launch_floor_ns: float  # the fastest launch call in the window
    pinned_h2d_bytes_per_s: float
    pinned_source: str
    kernel_busy_ns: float = 0.0  # the recorded kernels' union: what they occupied, contention included
    gpu_floor_ns: float = DEFAULT_MIN_KERNEL_NS  # the shortest a kernel takes on the GPU (devices.json)

    def recorded_span_ns(self) -> float:
        return max([self.hi] + [o.end for o in self.ops]) - self.lo


def pcie_bytes_per_s(device_name: str | None) -> float:
    """A pinned copy's bandwidth when the trace has none to measure it by: the PCIe link's payload
    rate. Gen5 x16 (H100, H200, B200, GH200's PCIe parts): 32 GT/s x 16 lanes x 128/130 encoding
    = 63.0 GB/s; Gen4 x16 (A100, L4, L40, RTX 40): 31.5 GB/s; times 256/(256+24) for a TLP's
    header and framing at a 256-byte payload (PCI Express Base Specification 5.0)."""
    tlp = 256.0 / (256.0 + 24.0)
    gen5 = any(k in (device_name or "") for k in ("H100", "H200", "H800", "B200", "B100", "GB200", "GH200"))
    lanes_gbs = 32e9 if gen5 else 16e9
    return lanes_gbs * 16 / 8 * 128 / 130 * tlp


def _num(v: Any) -> float:
    return float(v) if v is not None and v == v else 0.0


def _pageable(name: str) -> bool:
    return "Pageable" in name


def _h2d(name: str) -> bool:
    return "HtoD" in name


def build(tr: Trace, lo: float | None = None, hi: float | None = None, occurrences: int = 1) -> Graph:
    """The dependency graph of ``tr``'s CUDA calls made in ``[lo, hi]`` (default: all of them)."""
    api = tr.api
    if api.empty:
        return Graph(lo or 0.0, hi or 0.0, [], [], {}, max(1, occurrences), 0.0, 0.0, "none")
    lo = float(api["start"].min()) if lo is None else float(lo)
    hi = float(api["end"].max()) if hi is None else float(hi)
    rows = api[(api["start"] >= lo) & (api["start"] <= hi)].sort_values("start", kind="stable")
    gpu: dict[Any, list[dict[str, Any]]] = {}
    for df, kind in ((tr.kernels, "kernel"), (tr.memops, None)):
        if df.empty:
            continue
        for r in df.itertuples():
            gpu.setdefault(r.correlation, []).append(
                {
                    "kind": kind or str(r.kind),
                    "name": str(r.name),
                    "stream": r.stream,
                    "start": float(r.start),
                    "end": float(r.end),
                    "bytes": _num(getattr(r, "bytes", None)),
                }
            )
    launch_durs = sorted(float(d) for n, d in zip(rows["name"], rows["dur"]) if n in LAUNCH_APIS)
    med_launch = launch_durs[len(launch_durs) // 2] if launch_durs else 0.0
    long_launch = max(FIRST_LAUNCH_MIN_NS, FIRST_LAUNCH_X * med_launch)
    calls: list[Call] = []
    ops: list[Op] = []
    last_end: dict[Any, float] = {}
    waited_event: dict[Any, bool] = {}
    for r in rows.itertuples():
        name, tid = str(r.name), r.tid
        start, end = float(r.start), float(r.end)
        mine = (
            sorted(gpu.get(r.correlation, []), key=lambda o: o["start"])
            if r.correlation == r.correlation
            else []
        )
        if name in LAUNCH_APIS:
            kind = "first" if end - start >= long_launch else "launch"
        elif name.startswith(FIRST_CALL_PREFIXES):
            kind = "first"
        elif name.startswith(ALLOC_APIS):
            kind = "alloc"
        elif name.startswith(SYNC_APIS):
            kind = "sync"
        elif "emcpy" in name:
            kind = "copy"
        elif "emset" in name:
            kind = "memset"
        else:
            kind = "other"
        c = Call(tid, name, start, end, start - last_end.get(tid, lo), end - start, kind)
        last_end[tid] = end
        i = len(calls)
        calls.append(c)
        for o in mine:
            c.ops.append(len(ops))
            ops.append(
                Op(
                    i,
                    o["stream"],
                    o["end"] - o["start"],
                    o["kind"],
                    o["name"],
                    o["bytes"],
                    o["start"],
                    o["end"],
                    0.0,
                    0.0,
                )
            )
            if waited_event.pop(tid, False):
                ops[-1].dep = -1  # resolved below, once every op is known
        if name.startswith(("cudaStreamWaitEvent", "cuStreamWaitEvent")):
            waited_event[tid] = True
        blocking = name.startswith(IMPLICIT_SYNC_APIS) or kind == "sync"
        if kind == "copy" and mine:
            blocking = blocking or "Async" not in name or any(_pageable(o["name"]) for o in mine)
        c.covers = [-1] if blocking else []
    _place(calls, ops, lo)
    tails = {tid: max(0.0, hi - e) for tid, e in last_end.items()}
    pinned = [
        o.nbytes / o.dur * 1e9
        for o in ops
        if o.kind == "memcpy" and _h2d(o.name) and "Pinned" in o.name and o.nbytes >= MIB and o.dur > 0
    ]
    bw, src = (
        (max(pinned), "the trace's fastest pinned host-to-device copy")
        if pinned
        else (pcie_bytes_per_s(tr.device_name), "the PCIe link's payload rate")
    )
    busy = _union([(o.start, o.end) for o in ops if o.kind == "kernel"])
    floor = launch_durs[0] if launch_durs else 0.0
    return Graph(lo, hi, calls, ops, tails, max(1, occurrences), floor, bw, src, sum(e - s for s, e in busy))


def _place(calls: list[Call], ops: list[Op], lo: float) -> None:
    """Stream order, cross-stream waits, covered ops and the offsets that reproduce the recording."""
    by_stream: dict[Any, list[int]] = {}
    for j in sorted(range(len(ops)), key=lambda j: (ops[j].start, j)):
        s = by_stream.setdefault(ops[j].stream, [])
        ops[j].prev = s[-1] if s else None
        s.append(j)
    ends = {sid: [ops[j].end for j in js] for sid, js in by_stream.items()}
    for o in ops:
        if o.dep == -1:  # the other stream's op that ended last before this one started
            best = None
            for sid, js in by_stream.items():
                if sid == o.stream:
                    continue
                k = bisect.bisect_right(ends[sid], o.start) - 1
                while k >= 0 and ops[js[k]].call > o.call:
                    k -= 1
                if k >= 0 and (best is None or ops[js[k]].end > ops[best].end):
                    best = js[k]
            o.dep = best
    # The floors: an op's issue latency where its stream was free when it was issued (nothing but
    # the launch path delayed it), and its gap after the previous op where it was issued while that
    # one still ran (nothing but the GPU's own switch delayed it). None seen: no floor.
    issues = [
        o.start - calls[o.call].start for o in ops if o.prev is None or ops[o.prev].end <= calls[o.call].start
    ]
    gaps = [
        o.start - ops[o.prev].end for o in ops if o.prev is not None and calls[o.call].start < ops[o.prev].end
    ]
    floor_issue = max(0.0, min(issues)) if issues else 0.0
    floor_gap = max(0.0, min(gaps)) if gaps else 0.0
    for o in ops:
        host_at = calls[o.call].start + floor_issue
        stream_at = ops[o.prev].end + floor_gap if o.prev is not None else -1e30
        dep_at = ops[o.dep].end if o.dep is not None else -1e30
        bound = max(host_at, stream_at, dep_at)
        o.issue = o.start - calls[o.call].start if bound == host_at else floor_issue
        o.gap = (
            (o.start - ops[o.prev].end if bound == stream_at else floor_gap) if o.prev is not None else 0.0
        )
        o.lag = o.start - ops[o.dep].end if o.dep is not None and bound == dep_at else 0.0
    stream_calls = {sid: [ops[j].call for j in js] for sid, js in by_stream.items()}
    for i, c in enumerate(calls):
        if not c.covers:
            c.ret = c.dur
            continue
        covered = []
        for sid, js in by_stream.items():
            k = bisect.bisect_right(stream_calls[sid], i) - 1  # the last op issued by this call or before
            while k >= 0 and ops[js[k]].end > c.end:  # still running when the call returned: not covered
                k -= 1
            if k >= 0:
                covered.append(js[k])
        c.covers = covered
        waited = max([ops[j].end for j in covered], default=-1e30)
        c.ret = c.end - max(c.start, waited)


@dataclass
class Replayed:
    """A replay's outcome: the window's new span, and per op and call their new times."""

    span_ns: float
    step_ns: float
    call_end: list[float]
    op_end: list[float]


def replay(g: Graph, transform: Callable[[Graph], Graph] | None = None) -> Replayed:
    """Re-time ``g`` (after ``transform``) in one pass in recorded order: host calls follow each
    other on their thread, GPU operations start at the latest of their bounds, waits end ``ret``
    after their covered operations do."""
    g = transform(g) if transform else g
    ops, calls = g.ops, g.calls
    op_start, op_end = [0.0] * len(ops), [0.0] * len(ops)
    call_end = [0.0] * len(calls)
    thread_at: dict[Any, float] = {}
    for i, c in enumerate(calls):
        start = thread_at.get(c.tid, g.lo) + c.gap
        for j in c.ops:
            o = ops[j]
            t = start + o.issue
            if o.prev is not None:
                t = max(t, op_end[o.prev] + o.gap)
            if o.dep is not None:
                t = max(t, op_end[o.dep] + o.lag)
            op_start[j], op_end[j] = t, t + o.dur
        if c.covers:
            end = max([start] + [op_end[j] for j in c.covers]) + c.ret
        else:
            end = start + c.dur
        call_end[i] = end
        thread_at[c.tid] = end
    host_end = max([thread_at[t] + g.tails.get(t, 0.0) for t in thread_at], default=g.hi)
    # Kernels keep their recorded durations, which hold the contention of those that overlapped: no
    # replay may pack them tighter than they were (two kernels sharing the SMs do not both keep their
    # time). Their recorded union bounds the span from below.
    span = max(max([host_end] + op_end) - g.lo, g.kernel_busy_ns)
    return Replayed(span, span / g.occurrences, call_end, op_end)


def _copy(g: Graph) -> Graph:
    return replace(g, calls=[replace(c) for c in g.calls], ops=[replace(o) for o in g.ops])


def drop_syncs(g: Graph) -> Graph:
    """Every wait but the window's last returns without waiting (see the module docstring)."""
    g = _copy(g)
    waits = [c for c in g.calls if c.covers and _is_read(g, c)]
    for c in waits[:-1]:
        c.covers, c.dur = [], c.ret
    return g


def reuse_allocations(g: Graph) -> Graph:
    g = _copy(g)
    for c in g.calls:
        if c.kind == "alloc":
            c.covers, c.dur, c.ret = [], 0.0, 0.0
    return g


def _bulk_d2h(o: Op) -> bool:
    """A pageable device-to-host copy of a whole tensor (1 MiB or more): a per-step snapshot, not a value
    the host reads to decide (``.item()`` and small reads are the sync cause's)."""
    return o.kind == "memcpy" and _pageable(o.name) and "DtoH" in o.name and o.nbytes >= MIB


def pin_copies(g: Graph) -> Graph:
    """Pageable host-to-device copies pinned and prefetched on a copy engine; per-step device-to-host
    copies of whole tensors (``.cpu()`` of a tensor for logging) kept on the GPU: the copy and its wait
    go (the values are read once, after the loop)."""
    g = _copy(g)
    after: dict[Any, bool] = {}  # a thread's last call was a pageable copy made asynchronous
    for c in g.calls:
        bulk = [j for j in c.ops if _bulk_d2h(g.ops[j])]
        for j in bulk:
            g.ops[j].dur = 0.0
        if bulk:
            c.covers, c.dur, c.ret = [], min(c.dur, g.launch_floor_ns), min(c.ret, g.launch_floor_ns)
            after[c.tid] = True
            continue
        pageable = [j for j in c.ops if g.ops[j].kind == "memcpy" and _pageable(g.ops[j].name)]
        for j in pageable:
            o = g.ops[j]
            if o.nbytes > 0:
                o.dur = min(o.dur, o.nbytes / g.pinned_h2d_bytes_per_s * 1e9)
            if _h2d(o.name):  # prefetched on a copy engine: its stream no longer waits for it
                o.stream = ("copy engine", "HtoD")
        if pageable and all(_h2d(g.ops[j].name) for j in pageable):
            c.covers, c.dur = [], min(c.dur, g.launch_floor_ns)
            after[c.tid] = True
        elif after.pop(c.tid, False) and c.kind == "sync":
            c.covers, c.dur = [], c.ret  # the synchronise PyTorch adds after a pageable copy goes with it
    # Ops that followed a prefetched copy on its old stream follow the op before it instead.
    moved = {j for j, o in enumerate(g.ops) if o.stream == ("copy engine", "HtoD")}
    last_copy = None
    for j, o in enumerate(g.ops):
        while o.prev in moved and j not in moved:
            o.prev = g.ops[o.prev].prev
        if j in moved:
            o.prev, last_copy = last_copy, j
    return g


def graph_launches(g: Graph) -> Graph:
    """The launches captured as a CUDA graph: the host issues one graph launch per occurrence (the
    window's fastest launch call) instead of a call per kernel, with no Python or dispatcher time between
    them, and the GPU runs the kernels back to back, none shorter than the device's measured launch
    floor (an empty kernel: 0.83 µs on an H100)."""
    g = _copy(g)
    for c in g.calls:
        if c.kind in ("launch", "memset", "other") and c.gap < HOST_WORK_MIN_NS:
            c.gap = 0.0
        if c.kind in ("launch", "memset"):
            c.dur = c.ret = 0.0
        elif c.kind == "other" and not c.covers:
            c.dur = c.ret = 0.0
    for o in g.ops:
        o.gap = 0.0
        o.issue = min(o.issue, min((p.issue for p in g.ops), default=0.0))
        if o.kind == "kernel":
            o.dur = max(o.dur, g.gpu_floor_ns)
    g.tails = {t: v + g.launch_floor_ns * g.occurrences / max(1, len(g.tails)) for t, v in g.tails.items()}
    return g


def _is_read(g: Graph, c: Call) -> bool:
    """A synchronise, or a copy the host waits for that is not a host-to-device one: the host reads
    a value of the GPU's (idle.py's ``sync`` state)."""
    return c.kind == "sync" or (
        c.kind == "copy" and bool(c.covers) and not any(_h2d(g.ops[j].name) for j in c.ops)
    )


def host_ahead(g: Graph) -> Graph:
    g = _copy(g)
    drained: dict[Any, bool] = {}  # the thread read a GPU value and has not fed the GPU since
    for c in g.calls:
        if c.gap >= HOST_WORK_MIN_NS and not drained.get(c.tid):
            c.gap = 0.0
        if _is_read(g, c):
            drained[c.tid] = True
        elif c.ops:
            drained[c.tid] = False
    g.tails = {t: (0.0 if v >= HOST_WORK_MIN_NS and not drained.get(t) else v) for t, v in g.tails.items()}
    return g


def skip_first_calls(g: Graph) -> Graph:
    g = _copy(g)
    for c in g.calls:
        if c.kind == "first":
            c.dur = c.ret = min(c.dur, g.launch_floor_ns) if c.name in LAUNCH_APIS else 0.0
    return g


# The idle causes (analysis/diagnosis/timeline.py's keys) and the transform that removes each.
TRANSFORMS: dict[str, Callable[[Graph], Graph]] = {
    "sync": drop_syncs,
    "host": host_ahead,
    "launch": graph_launches,
    "copy": pin_copies,
    "cuda_api": reuse_allocations,
    "first_call": skip_first_calls,
}


def gains(
    tr: Trace, lo: float | None = None, hi: float | None = None, occurrences: int = 1
) -> dict[str, Any]:
    """Each cause's replayed step time (the timeline dict's ``idle["replay"]``): ``recorded_ns``
    (the window's span per occurrence), ``identity_ns`` (replayed with nothing removed: equal
    unless the graph missed a dependency), ``step_ns`` per cause, and the pinned bandwidth used."""
    g = build(tr, lo, hi, occurrences)
    if not g.calls:
        return {}
    return {
        "recorded_ns": g.recorded_span_ns() / g.occurrences,
        "d2h_bulk_ns": sum(o.dur for o in g.ops if _bulk_d2h(o)) / g.occurrences,
        "identity_ns": replay(g).step_ns,
        "step_ns": {cause: replay(g, t).step_ns for cause, t in TRANSFORMS.items()},
        "launch_floor_ns": g.launch_floor_ns,
        "pinned_h2d_bytes_per_s": g.pinned_h2d_bytes_per_s,
        "pinned_source": g.pinned_source,
    }
