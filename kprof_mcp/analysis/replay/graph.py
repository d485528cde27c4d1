"""The recorded run of a window as a dependency graph (:func:`build`) and its re-timing
(:func:`replay`); the package's docstring says what each part stands for.

* **host**: per host thread, its CUDA API calls in order, each with the host time spent outside
  CUDA before it (``gap``: Python, the dispatcher, the user's own work) and its own duration.
* **GPU operations**: each launch, copy or memset call's kernel/copy/memset on its stream. An
  operation starts at the latest of (its call's start + an issue latency, the previous operation
  on its stream's end + a gap, and, after a ``cudaStreamWaitEvent``, the end of the other stream's
  operation it waited for). Which of these bound it is read from the recording; the bound one
  keeps its recorded offset, the others their floors (the smallest issue latency and stream gap
  seen in the window), so an identity replay gives back every recorded start exactly. A kernel
  also keeps its launch shape (grid and block) and its ``waves``: its blocks over the SMs times the
  blocks per SM its registers, shared memory and warps allow (:mod:`kprof_mcp.analysis.occupancy`);
  ``fill``, the share of the GPU it could fill, is that at most 1.
* **waits**: a synchronising call (stream/device/event synchronise, ``cudaFree``, a blocking
  copy: pageable, or the synchronous ``cudaMemcpy``) covers, per stream, the last operation issued
  before it that had ended when it returned. Replayed, it returns ``ret`` after the latest of its
  start and its covered operations' new ends, ``ret`` being the host time it spent after the wait
  (all of it when it did not wait).
* **steps**: the starts of the window's step ranges (a range name with exactly ``occurrences``
  starts in the window: the kept occurrences of a stage, or a package plan's iterations), which
  a what-if may not reach across (``cuts``).

Pure: tables in, numbers out. Times are ns.
"""

from __future__ import annotations

import bisect
import functools
import gc
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ...devices import DEFAULT_MIN_KERNEL_NS, try_match_device
from ...parsers.kineto import Trace
from ...parsers.nsys import process_id, process_of
from ..idle import (
    FIRST_CALL_PREFIXES,
    FIRST_LAUNCH_MIN_NS,
    FIRST_LAUNCH_X,
    HOST_WORK_MIN_NS,
    MODULE_UNLOAD_PREFIXES,
    SYNC_APIS,
    blocking_launch,
    modules_cycled,
)
from ..occupancy import waves_of
from ..timeline import GRAPH_BUILD_APIS, LAUNCH_APIS, _union, captured
from .sampled import gap_samples

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
    # page-locking host memory and unlocking it (``with cuda.pinned(array)``): pinned allocation by another name
    *("cudaHostRegister", "cudaHostUnregister", "cuMemHostRegister", "cuMemHostUnregister"),
)
# cudaFree synchronises the device before it returns the memory (CUDA runtime API: "API synchronization behavior")
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
    shape: tuple[Any, Any] = (None, None)  # a kernel's (grid blocks, block threads)
    fill: float = 1.0  # the share of the GPU a kernel's blocks could fill: min(1, waves)
    waves: float = 1.0  # its blocks over the SMs x blocks per SM (see the module docstring)


@dataclass
class Call:
    """A CUDA API call of one host thread."""

    tid: Any
    name: str
    start: float  # recorded
    end: float  # recorded
    gap: float  # host time outside CUDA before it on its thread
    dur: float  # its duration when it does not wait
    kind: str  # launch | memset | copy | sync | alloc | capture | first | other
    ops: list[int] = field(default_factory=list)
    covers: list[int] = field(default_factory=list)  # ops it waits for
    ret: float = 0.0  # host time after its wait (all of dur when it did not wait)
    waker: int | None = None  # the other thread's call it waited for (see :func:`_wakers`)
    wake: float = 0.0  # offset after that call's end
    source: str | None = None  # the user's Python line that made it, and the library function (backtraces)
    op: str | None = None


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
    cuts: list[float] = field(default_factory=list)  # the steps' starts (see the module docstring)
    samples: list = field(default_factory=list)  # the host's Python samples in its gaps (:mod:`.sampled`)
    read_floor_ns: float = 0.0  # a read's host cost with nothing to wait for, unprofiled (the plain pass's)
    op_floor_ns: float = 0.0  # a lean eager op's issuing time per launch, in the trace (:mod:`.floors`)

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


def _without_gc(f):
    """``f`` with Python's cyclic collector paused, then as it was: a long trace's graph is 100,000s of
    objects every collection walks again (a third of its what-ifs' time); nothing here needs it to be freed."""

    @functools.wraps(f)
    def run(*args, **kwargs):
        was = gc.isenabled()
        gc.disable()
        try:
            return f(*args, **kwargs)
        finally:
            if was:
                gc.enable()

    return run


@_without_gc
def build(tr: Trace, lo: float | None = None, hi: float | None = None, occurrences: int = 1) -> Graph:
    """The dependency graph of ``tr``'s CUDA calls made in ``[lo, hi]`` (default: all of them)."""
    api = tr.api
    if api.empty:
        return Graph(lo or 0.0, hi or 0.0, [], [], {}, max(1, occurrences), 0.0, 0.0, "none")
    lo = float(api["start"].min()) if lo is None else float(lo)
    hi = float(api["end"].max()) if hi is None else float(hi)
    rows = api[(api["start"] >= lo) & (api["start"] <= hi)].sort_values("start", kind="stable")
    spec, _ = try_match_device(tr.device_name)
    waves = waves_of(spec.arch if spec else None, tr.num_sms or (spec.sm_count if spec else None))
    gpu: dict[Any, list[dict[str, Any]]] = {}
    for df, kind in ((tr.kernels, "kernel"), (tr.memops, None)):
        if df.empty:
            continue
        for r in df.itertuples():
            gpu.setdefault(r.correlation, []).append(
                {
                    "kind": kind or str(r.kind),
                    "name": str(r.name),
                    # stream ids are numbered per process: a report of several ranks has one stream 7 each
                    "stream": (process_of(r.correlation), r.stream),
                    "start": float(r.start),
                    "end": float(r.end),
                    "bytes": _num(getattr(r, "bytes", None)),
                    "shape": (getattr(r, "grid_blocks", None), getattr(r, "block_threads", None)),
                    "waves": waves(r) if kind else 1.0,
                }
            )
    names, tids = rows["name"].tolist(), rows["tid"].tolist()  # column by column: no row iterator
    launch_durs = sorted(float(d) for n, d in zip(names, rows["dur"].tolist()) if n in LAUNCH_APIS)
    med_launch = launch_durs[len(launch_durs) // 2] if launch_durs else 0.0
    long_launch = max(FIRST_LAUNCH_MIN_NS, FIRST_LAUNCH_X * med_launch)
    launch_min = launch_durs[0] if launch_durs else 0.0
    calls: list[Call] = []
    ops: list[Op] = []
    last_end: dict[Any, float] = {}
    waited_event: dict[Any, bool] = {}
    in_capture = captured(names, tids)
    cycled = modules_cycled(names, occurrences)
    n = len(names)
    srcs = rows["source"].tolist() if "source" in rows.columns else [None] * n
    fns = rows["op"].tolist() if "op" in rows.columns else [None] * n
    columns = zip(names, tids, rows["start"].tolist(), rows["end"].tolist(), rows["correlation"].tolist())
    for (name, tid, start, end, correlation), capt, src, fn in zip(columns, in_capture, srcs, fns):
        name, start, end = str(name), float(start), float(end)
        mine = (
            sorted(gpu.get(correlation, []), key=lambda o: o["start"]) if correlation == correlation else []
        )
        if capt or name.startswith(GRAPH_BUILD_APIS):
            kind = "capture"  # a graph built in the loop (its capture's launches run nothing): built once
        elif name in LAUNCH_APIS:
            kind = "first" if end - start >= long_launch else "launch"
        elif name.startswith(FIRST_CALL_PREFIXES) or (cycled and name.startswith(MODULE_UNLOAD_PREFIXES)):
            kind = "alloc" if cycled else "first"  # a plan or handle made in the loop is kept, as a buffer is
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
        c.source, c.op = (src if isinstance(src, str) else None), (fn if isinstance(fn, str) else None)
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
                    shape=o["shape"],
                    fill=min(1.0, o["waves"]),
                    waves=o["waves"],
                )
            )
            if waited_event.pop(tid, False):
                ops[-1].dep = -1  # resolved below, once every op is known
        if name.startswith(("cudaStreamWaitEvent", "cuStreamWaitEvent")):
            waited_event[tid] = True
        blocking = name.startswith(IMPLICIT_SYNC_APIS) or kind == "sync"
        if kind == "launch" and mine:  # a launch that waited for its own kernel (CUDA_LAUNCH_BLOCKING=1)
            own = (min(o["start"] for o in mine), max(o["end"] for o in mine))
            blocking = blocking_launch(start, end, own)
        if kind == "copy" and mine:
            blocking = blocking or "Async" not in name or any(_pageable(o["name"]) for o in mine)
        c.covers = [-1] if blocking else []
    _place(calls, ops, lo)
    _wakers(calls)
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
    floor = launch_min
    return Graph(
        lo,
        hi,
        calls,
        ops,
        tails,
        max(1, occurrences),
        floor,
        bw,
        src,
        sum(e - s for s, e in busy),
        spec.min_kernel_ns if spec else DEFAULT_MIN_KERNEL_NS,
        _cuts(tr, lo, hi, occurrences),
        gap_samples(tr.py_samples, calls, lo),
    )


def _cuts(tr: Trace, lo: float, hi: float, occurrences: int) -> list[float]:
    """The steps' starts: those of every range name with exactly ``occurrences`` (> 1) starts in the
    window (a command's kept stage occurrences, a package plan's iterations)."""
    r = tr.ranges
    if occurrences < 2 or r is None or r.empty:
        return []
    r = r[(r["start"] >= lo) & (r["start"] <= hi)]
    counts = r["name"].value_counts()
    steps = set(counts[counts == occurrences].index)
    return sorted({float(s) for n, s in zip(r["name"], r["start"]) if n in steps})


# A thread idle this long while another thread of its process issued at least WAKE_MIN_LAUNCHES launches
# was waiting for that thread (see :func:`_wakers`).
WAKE_MIN_LAUNCHES = 2
WAKE_SCAN = 20_000  # calls looked back at, at most, for one call


def _process(tid: Any) -> int:
    """The process of a thread id: Nsight Systems' ``globalTid`` holds it (bits 24-47); a profiler
    trace's plain thread ids are of one process."""
    try:
        t = int(tid)
    except (TypeError, ValueError):
        return 0
    return (process_id(t) or 0) if t >= 1 << 24 else 0


def _wakers(calls: list[Call]) -> None:
    """Cross-thread waits the trace does not record as calls: a thread that issued nothing for
    ``HOST_WORK_MIN_NS`` or longer while another thread of its process launched GPU work (at least
    :data:`WAKE_MIN_LAUNCHES` launches) was waiting for it — PyTorch's autograd engine runs the backward on
    a thread of its own, which the main thread wakes (``loss.backward()``) and then waits for. Such a call
    is bound to the other threads' last call before it (``waker``) at its recorded offset (``wake``), not
    to its own thread's previous call plus the idle stretch: a what-if that moves the waking thread moves
    it too. The identity replay is unchanged."""
    last: dict[Any, float] = {}
    for i, c in enumerate(calls):
        before = last.get(c.tid)
        last[c.tid] = c.end
        if before is None or c.gap < HOST_WORK_MIN_NS:
            continue
        proc, launches, waker = _process(c.tid), 0, None
        for k in range(i - 1, max(-1, i - 1 - WAKE_SCAN), -1):
            o = calls[k]
            if o.start < before:
                break
            if o.tid == c.tid or _process(o.tid) != proc or o.end > c.start:
                continue
            if waker is None or o.end > calls[waker].end:
                waker = k
            launches += o.kind == "launch"
        if waker is not None and launches >= WAKE_MIN_LAUNCHES:
            c.waker, c.wake = waker, c.start - calls[waker].end


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
                if sid == o.stream or sid[0] != o.stream[0]:  # an event of its own process's streams
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


@_without_gc
def replay(g: Graph, transform: Callable[[Graph], Graph] | None = None) -> Replayed:
    """Re-time ``g`` (after ``transform``) in one pass in recorded order: host calls follow each
    other on their thread, GPU operations start at the latest of their bounds, waits end ``ret``
    after their covered operations do."""
    g = transform(g) if transform else g
    ops, calls = g.ops, g.calls
    op_start, op_end = [0.0] * len(ops), [0.0] * len(ops)
    call_end = [0.0] * len(calls)
    thread_at: dict[Any, float] = {}
    lo = g.lo
    for i, c in enumerate(calls):  # the hot loop of every what-if: attributes read once each
        tid = c.tid
        at = thread_at.get(tid, lo)
        start = at + c.gap
        if c.waker is not None:  # it waited for another thread's call, not for its own host work
            start = max(at, call_end[c.waker] + c.wake)
        for j in c.ops:
            o = ops[j]
            t = start + o.issue
            prev, dep = o.prev, o.dep
            if prev is not None:
                t = max(t, op_end[prev] + o.gap)
            if dep is not None:
                t = max(t, op_end[dep] + o.lag)
            op_start[j] = t
            op_end[j] = t + o.dur
        covers = c.covers
        if covers:
            end = max([start] + [op_end[j] for j in covers]) + c.ret
        else:
            end = start + c.dur
        call_end[i] = end
        thread_at[tid] = end
    host_end = max([thread_at[t] + g.tails.get(t, 0.0) for t in thread_at], default=g.hi)
    # Kernels keep their recorded durations, which hold the contention of those that overlapped: no
    # replay may pack them tighter than they were (two kernels sharing the SMs do not both keep their
    # time). Their recorded union bounds the span from below.
    span = max(max([host_end] + op_end) - g.lo, g.kernel_busy_ns)
    return Replayed(span, span / g.occurrences, call_end, op_end)


def _copy(g: Graph) -> Graph:
    """A copy of ``g`` a transform may change: new lists of the same calls and ops, copy-on-write — the
    transform takes its own copy of each call or op it changes (:func:`own`), so the graph every what-if
    starts from stays as recorded, and a what-if that changes a few calls of a long trace copies a few."""
    return replace(g, calls=list(g.calls), ops=list(g.ops), tails=dict(g.tails), cuts=list(g.cuts))


def own(items: list, i: int):
    """``items[i]`` replaced by a shallow copy of it, returned: what a transform changes (:func:`_copy`)."""
    x = items[i] = _shallow(items[i])
    return x


def _shallow(x):
    y = object.__new__(type(x))
    y.__dict__ = x.__dict__.copy()  # a new dict of the same entries (faster than update() into one)
    return y
