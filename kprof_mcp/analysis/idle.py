"""Where a timeline's wall time went: the GPU's busy time, and its idle time split by what the host
was doing meanwhile (issue 26; Holistic Trace Analysis' idle-time breakdown is the reference, made
finer: HTA tells host wait from short kernel-to-kernel gaps, this also tells syncs, one-off costs
and copies apart).

The GPU is busy while any kernel or memory operation runs (the union over streams). Every instant
of the window in which it is not is given to exactly one host state, the first that holds:

1. **first_call**: a host thread is in a one-off call — the process's first CUDA call (context
   creation), module or library loading (``cuModuleLoad*``, ``cuLibraryLoad*``: lazy loading,
   Triton's JIT output), or a launch call far
   longer than launches take (≥ :data:`FIRST_LAUNCH_MIN_NS` and ≥ :data:`FIRST_LAUNCH_X` × the
   median launch: the first launch of a kernel, which loads its module).
2. **copy_h2d**: a host thread is in a host-to-device copy call (a pageable copy is staged by the
   host while the GPU waits).
3. **sync**: the idle gap began while a host thread was blocked in a synchronisation
   (``cudaStreamSynchronize``, ``cudaDeviceSynchronize``, ``cudaEventSynchronize``, …), a
   device-to-host copy (``.item()``, ``.cpu()``) or a launch that waited for its own kernel
   (:func:`blocking_launch`: ``CUDA_LAUNCH_BLOCKING=1``, a debugging hook): the GPU drained, and
   everything the host did next, until it launched again, could not overlap GPU work. The whole rest
   of that gap is the sync's.
4. **launch**: a host thread is in a launch call, or between calls for less than
   :data:`HOST_WORK_MIN_NS` (the Python and dispatcher time of issuing the next operation): per-launch
   overhead, which CUDA graphs or fusion remove.
5. **other_api**: a host thread is in another CUDA call (``cudaMalloc``, ``cudaFree``, event
   records, …). Polls (``cudaEventQuery``, ``cudaStreamQuery``) do not count as calls.
6. **host**: the host is outside CUDA for :data:`HOST_WORK_MIN_NS` or longer at a stretch: its own
   compute, data loading, Python — the GPU waits for a host that has not issued the work yet.

Pure: a :class:`~kprof_mcp.parsers.kineto.Trace` (either recorder) and a window in, numbers out.
Times are ns.
"""

from __future__ import annotations

import bisect
import statistics
from dataclasses import dataclass, field
from typing import Any

from ..parsers.kineto import Trace
from . import idle_sources
from .timeline import GRAPH_BUILD_APIS, LAUNCH_APIS, _union, captured

# The boundary between per-launch host overhead and host work. An eager PyTorch operation costs
# 5-40 us of Python and dispatcher time before its launch call; host work that starves the GPU
# (numpy, data loading, logging) runs for hundreds of microseconds or more. Chosen with the
# command launch pair ("launch-bound loop") in view: it is a constant of the fit half.
HOST_WORK_MIN_NS = 100_000.0
# A launch call this long (and FIRST_LAUNCH_X times the median launch) loads a module first.
FIRST_LAUNCH_MIN_NS = 200_000.0
FIRST_LAUNCH_X = 20.0
# A gap that begins within this long after a synchronising call returned still began in it (the
# call returns a few microseconds after the GPU's last work ends).
SYNC_RETURN_NS = 20_000.0


WAITED_LAUNCH = "(waited for its kernel)"  # the label of such a launch among the sync calls
RELOADED = "(loaded again at every step)"  # a module load among the CUDA calls in the loop (modules_cycled)


def blocking_launch(start: float, end: float, own: tuple[float, float] | None) -> bool:
    """Whether a launch call waited for its own GPU work: that work (``own``: its first start, its last
    end) ran wholly inside the call, for at least as long as the call took to start it, and the call
    returned no later after the work's end than the work had started after the call's start (its return
    followed the work's end as its work had followed its issue). A shorter kernel that ran inside its
    call says nothing: an asynchronous call that took a few microseconds longer holds one too. An asynchronous launch returns once its work is queued, before a GPU with nothing to do
    has started it; a launch held by a full queue returns before its own work has run; one that a
    preempted host kept long returns long after. ``CUDA_LAUNCH_BLOCKING=1`` makes every launch a wait."""
    if own is None:
        return False
    s, e = own
    return start <= s < e <= end and end - e <= s - start <= e - s


def own_work(tr: Trace) -> dict[Any, tuple[float, float]]:
    """Per correlation id, the first start and last end of the GPU work a call made."""
    out: dict[Any, tuple[float, float]] = {}
    for df in (tr.kernels, tr.memops):
        if df.empty:
            continue
        for c, s, e in zip(df["correlation"], df["start"], df["end"]):
            s, e = float(s), float(e)
            a = out.get(c)
            out[c] = (s, e) if a is None else (min(a[0], s), max(a[1], e))
    return out


SYNC_APIS = (
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuEventSynchronize",
)
FIRST_CALL_PREFIXES = (
    "cuModuleLoad",
    "cuLibraryLoad",
    "cudaModuleLoad",
    "cuLinkComplete",
    "cuModuleGetFunction",
    "cuLibraryGetKernel",
    "cuLibraryGetModule",
    "cuKernelGetFunction",
)
# Explicit module loads, what a JIT (Triton, NVRTC, CuPy, Numba) calls once it has the binary. Where a window
# of several occurrences loads at least once an occurrence (a kernel built at every step), the host work right
# before each load — compiling, hashing the source, looking the binary up in a cache — is the module's
# production, the one-off cost the load ends (:func:`jit_every_step`); a start-up window's loads follow
# imports and set-up as well, and stay apart from the host work before them.
JIT_LOAD_PREFIXES = ("cuModuleLoad", "cudaModuleLoad", "cuLinkComplete")


def jit_every_step(loads: int, occurrences: int) -> bool:
    """Whether ``loads`` explicit module loads in a window of ``occurrences`` are a kernel built at every
    step (see :data:`JIT_LOAD_PREFIXES`)."""
    return occurrences >= 2 and loads >= occurrences


MODULE_UNLOAD_PREFIXES = ("cuModuleUnload", "cuLibraryUnload", "cudaModuleUnload")


def modules_cycled(names: list[str], occurrences: int) -> bool:
    """Whether the window's calls ``names`` load modules at every step and unload most of them again: a
    library's plan or handle made and destroyed in the loop (a cuFFT plan with the plan cache off, a
    CuPy ``RawModule`` built per call). Not a one-off cost that warming up removes, CUDA calls in the loop
    (``cuda_api``): keeping the plan or handle removes the loads and the unloads
    (:func:`~kprof_mcp.analysis.replay.reuse_allocations`), and the host work before a load is not a JIT's."""
    loads = sum(n.startswith((*JIT_LOAD_PREFIXES, "cuLibraryLoad")) for n in names)
    unloads = sum(n.startswith(MODULE_UNLOAD_PREFIXES) for n in names)
    return jit_every_step(loads, occurrences) and 2 * unloads >= loads


POLL_APIS = (
    "cudaEventQuery",
    "cudaStreamQuery",
    "cuEventQuery",
    "cuStreamQuery",
    "cudaGetLastError",
    "cudaPeekAtLastError",
)
PARTS = ("first_call", "copy_h2d", "sync", "launch", "other_api", "host")


@dataclass
class IdleBreakdown:
    """The window's wall time: GPU busy, and GPU idle by host state (see the module docstring)."""

    window_ns: float
    busy_ns: float
    idle_ns: float
    parts_ns: dict[str, float]  # PARTS -> ns of GPU idle time
    gaps: int  # idle gaps in the window
    occurrences: int = 1  # repetitions of the measured work in the window (range occurrences, iterations)
    evidence: dict[str, Any] = field(default_factory=dict)
    # PARTS -> the Python line whose CUDA calls own most of that idle time (analysis.idle_sources);
    # empty unless the recording has each call's line (Nsight Systems with Python backtraces).
    sources: dict[str, Any] = field(default_factory=dict)

    def share(self, part: str) -> float:
        return self.parts_ns.get(part, 0.0) / self.window_ns if self.window_ns > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "window_ns": self.window_ns,
            "busy_ns": self.busy_ns,
            "idle_ns": self.idle_ns,
            "parts_ns": dict(self.parts_ns),
            "gaps": self.gaps,
            "occurrences": self.occurrences,
            "evidence": self.evidence,
            **({"sources": self.sources} if self.sources else {}),
        }


class _Set:
    """A union of intervals with fast overlap queries."""

    def __init__(self, iv: list[tuple[float, float]]):
        self.iv = _union(iv)
        self.starts = [s for s, _ in self.iv]

    def overlapping(self, lo: float, hi: float) -> list[tuple[float, float]]:
        i = max(0, bisect.bisect_right(self.starts, lo) - 1)
        out = []
        while i < len(self.iv) and self.iv[i][0] < hi:
            s, e = self.iv[i]
            if e > lo:
                out.append((max(s, lo), min(e, hi)))
            i += 1
        return out

    def containing(self, t: float, slack: float = 0.0) -> tuple[float, float] | None:
        i = bisect.bisect_right(self.starts, t) - 1
        if i >= 0 and self.iv[i][0] <= t <= self.iv[i][1] + slack:
            return self.iv[i]
        return None


def _split(
    pieces: list[tuple[float, float]], cut: _Set
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """``pieces`` minus ``cut``; returns (what is left, what was taken)."""
    left, taken = [], []
    for lo, hi in pieces:
        cur = lo
        for s, e in cut.overlapping(lo, hi):
            if s > cur:
                left.append((cur, s))
            taken.append((s, e))
            cur = max(cur, e)
        if cur < hi:
            left.append((cur, hi))
    return left, taken


def _length(pieces: list[tuple[float, float]]) -> float:
    total = 0.0
    for s, e in pieces:
        total += e - s
    return total


def _subtract(pieces: list[tuple[float, float]], cut: _Set) -> tuple[list[tuple[float, float]], float]:
    """``pieces`` minus ``cut``; returns (what is left, the length removed)."""
    left, taken = _split(pieces, cut)
    return left, _length(taken)


def _intervals(df) -> list[tuple[float, float]]:
    """``df``'s rows as (start, end) floats, read column by column (``itertuples`` is several times
    slower on a trace of 100,000s of calls)."""
    if df.empty:
        return []
    return [(float(s), float(e)) for s, e in zip(df["start"].tolist(), df["end"].tolist())]


def _samples(tr: Trace) -> list[idle_sources.Sample]:
    """The sampled Python stacks (Trace.py_samples) of the threads that made the trace's CUDA calls, where
    the thread was not blocked (a waiting thread does no host work)."""
    ps = tr.py_samples
    if ps is None or ps.empty or tr.api.empty or "tid" not in tr.api.columns:
        return []
    mine = ps[ps["tid"].isin(set(tr.api["tid"].dropna().tolist())) & ~ps["blocked"].astype(bool)]
    mine = mine.sort_values("start")
    return list(zip(mine["start"].astype(float), mine["source"], mine["op"]))


def breakdown(
    tr: Trace, lo: float | None = None, hi: float | None = None, occurrences: int = 1, process: bool = False
) -> IdleBreakdown:
    """The breakdown of ``[lo, hi]`` (default: first to last GPU activity) of ``tr``. ``process``:
    ``tr`` is the whole process, so its first CUDA call is the one that created the context."""
    gpu = _intervals(tr.kernels) + _intervals(tr.memops)
    busy = _union(gpu)
    if lo is None:
        lo = busy[0][0] if busy else 0.0
    if hi is None:
        hi = busy[-1][1] if busy else 0.0
    window = max(0.0, hi - lo)
    busy_in = _union([(max(s, lo), min(e, hi)) for s, e in busy if e > lo and s < hi])
    busy_ns = sum(e - s for s, e in busy_in)
    gaps: list[tuple[float, float]] = []
    cur = lo
    for s, e in busy_in:
        if s > cur:
            gaps.append((cur, s))
        cur = max(cur, e)
    if cur < hi:
        gaps.append((cur, hi))

    api = tr.api if not tr.api.empty else None
    ev: dict[str, Any] = {}
    cats: dict[str, list[tuple[float, float]]] = {
        k: [] for k in ("first_call", "copy_h2d", "sync", "launch", "other")
    }
    calls: list[tuple[float, float]] = []
    # The starts of explicit module loads: the host stretch before each is theirs (JIT_LOAD_PREFIXES).
    jit_loads: set[float] = set()
    lined: list[idle_sources.Call] = []  # every call with its category and Python line (when recorded)
    if api is not None:
        memkind = {}
        if not tr.memops.empty:
            for r in tr.memops.itertuples():
                memkind[r.correlation] = (
                    "h2d" if "HtoD" in str(r.name) else "d2h" if "DtoH" in str(r.name) else "other"
                )
        names = api["name"].astype(str)
        is_launch = names.isin(LAUNCH_APIS)
        launch_durs = api.loc[is_launch, "dur"]
        med_launch = float(launch_durs.median()) if len(launch_durs) else 0.0
        long_launch = max(FIRST_LAUNCH_MIN_NS, FIRST_LAUNCH_X * med_launch)
        own = own_work(tr)
        counts: dict[str, dict[str, list[float]]] = {k: {} for k in cats}
        first_call_at = float(api["start"].min()) if process else None
        has_lines = "source" in api.columns
        name_list = names.tolist()  # column by column: a row iterator costs several times as much
        in_capture = captured(name_list, api["tid"].tolist())
        starts = api["start"].tolist()
        cycled = modules_cycled([n for n, t in zip(name_list, starts) if lo <= t <= hi], occurrences)
        nones = [None] * len(api)
        columns = zip(
            name_list,
            is_launch.tolist(),
            in_capture,
            starts,
            api["end"].tolist(),
            api["dur"].tolist(),
            api["correlation"].tolist(),
            api["source"].tolist() if has_lines else nones,
            api["op"].tolist() if has_lines and "op" in api.columns else nones,
        )
        for name, launch, capt, start, end, dur, correlation, src, op in columns:
            if name.startswith(POLL_APIS):
                continue
            iv = (float(start), float(end))
            if first_call_at is not None and float(start) == first_call_at and dur >= FIRST_LAUNCH_MIN_NS:
                cat = "first_call"  # the process's first CUDA call creates its context
            elif capt or name.startswith(GRAPH_BUILD_APIS):
                cat = "other"  # a graph built in the loop: its capture's launches run nothing
                name = f"{name} (into a stream capture)" if launch else name
            elif launch and blocking_launch(iv[0], iv[1], own.get(correlation)):
                cat = "sync"  # it waited for its own kernel: the GPU drains behind every such launch
                name = f"{name} {WAITED_LAUNCH}"
            elif launch:
                cat = "first_call" if dur >= long_launch else "launch"
            elif name.startswith(FIRST_CALL_PREFIXES) and cycled:
                cat = "other"  # a plan or handle made in the loop (modules_cycled)
                name = f"{name} {RELOADED}"
            elif name.startswith(FIRST_CALL_PREFIXES):
                cat = "first_call"
                if name.startswith(JIT_LOAD_PREFIXES) and lo <= float(start) <= hi:
                    jit_loads.add(float(start))
            elif name.startswith(SYNC_APIS):
                cat = "sync"
            elif "emcpy" in name:
                kind = memkind.get(correlation)
                cat = "copy_h2d" if kind == "h2d" else "sync" if kind == "d2h" else "other"
            else:
                cat = "other"
            cats[cat].append(iv)
            calls.append(iv)
            if has_lines:
                lined.append(
                    idle_sources.Call(
                        iv[0],
                        iv[1],
                        cat,
                        src if isinstance(src, str) else None,
                        op if isinstance(op, str) else None,
                    )
                )
            if lo <= iv[0] <= hi:
                label = (
                    f"{name} (a first launch: loads its module)" if cat == "first_call" and launch else name
                )
                counts[cat].setdefault(label, []).append(float(dur))
        ev["median_launch_call_ns"] = med_launch
        for cat, by in counts.items():
            ev[f"{cat}_calls"] = sorted(
                ({"call": k, "count": len(v), "total_ns": sum(v)} for k, v in by.items()),
                key=lambda d: d["total_ns"],
                reverse=True,
            )[:6]
    sets = {k: _Set(v) for k, v in cats.items()}
    if not jit_every_step(len(jit_loads), occurrences):
        jit_loads = set()
    # Host stretches outside CUDA: between consecutive calls (of any thread), with their full length.
    in_cuda = _Set(calls)
    outside: list[tuple[float, float]] = []
    prev = lo - 1e18
    for s, e in in_cuda.iv:
        if s > prev:
            outside.append((prev, s))
        prev = max(prev, e)
    outside.append((prev, hi + 1e18))
    out_starts = [s for s, _ in outside]

    parts = {k: 0.0 for k in PARTS}
    owned = idle_sources.Owned()
    sync_gaps, host_stretches = 0, []
    for a, b in gaps:
        pieces = [(a, b)]
        pieces, taken = _split(pieces, sets["first_call"])
        parts["first_call"] += _length(taken)
        owned.add("first_call", taken)
        pieces, taken = _split(pieces, sets["copy_h2d"])
        parts["copy_h2d"] += _length(taken)
        owned.add("copy_h2d", taken)
        if sets["sync"].containing(a, SYNC_RETURN_NS) is not None:
            rest = sum(e - s for s, e in pieces)
            parts["sync"] += rest
            owned.sync_gaps.append((a, rest))
            sync_gaps += 1
            continue
        for cat, part in (("sync", "sync"), ("launch", "launch"), ("other", "other_api")):
            pieces, taken = _split(pieces, sets[cat])
            parts[part] += _length(taken)
            owned.add(part, taken)
        for s, e in pieces:
            i = bisect.bisect_right(out_starts, s) - 1
            # A stretch before the window's first call or after its last has no known length: its
            # part inside the window stands for it.
            bounded = 0 < i < len(outside) - 1
            full = outside[i][1] - outside[i][0] if bounded else e - s
            if full < HOST_WORK_MIN_NS:
                parts["launch"] += e - s
                owned.short.append((s, e))
            elif bounded and outside[i][1] in jit_loads:  # a module's production (JIT_LOAD_PREFIXES)
                parts["first_call"] += e - s
                owned.add("first_call", [(s, e)])
            else:
                parts["host"] += e - s
                owned.host.append((s, e))
                if bounded:
                    host_stretches.append(full)
    ev["sync_ops"] = _sync_ops(tr, cats["sync"], lo, hi)
    ev["sync_gaps"] = sync_gaps
    ev["host_stretches"] = len(set(host_stretches))  # bounded stretches of host work (>= HOST_WORK_MIN_NS)
    ev["host_stretch_median_ns"] = statistics.median(host_stretches) if host_stretches else None
    ev["launches"] = int(sum(1 for s, _ in cats["launch"] if lo <= s <= hi))
    h2d = tr.memops[tr.memops["name"].astype(str).str.contains("HtoD")] if not tr.memops.empty else tr.memops
    h2d = h2d[(h2d["start"] >= lo) & (h2d["start"] <= hi)] if len(h2d) else h2d
    ev["h2d_copies"] = int(len(h2d))
    ev["h2d_bytes"] = float(h2d["bytes"].fillna(0).sum()) if len(h2d) else 0.0
    # H2D copy time during which no kernel ran: what copies on a side stream could hide.
    kern = _Set(_intervals(tr.kernels))
    exposed = 0.0
    for r in h2d.itertuples() if len(h2d) else []:
        _, hidden = _subtract([(float(r.start), float(r.end))], kern)
        exposed += float(r.end) - float(r.start) - hidden
    ev["h2d_exposed_ns"] = exposed
    sources = idle_sources.attribute(lined, owned, lo, hi, SYNC_RETURN_NS, _samples(tr)) if lined else {}
    return IdleBreakdown(
        window_ns=window,
        busy_ns=busy_ns,
        idle_ns=max(0.0, window - busy_ns),
        parts_ns=parts,
        gaps=len(gaps),
        occurrences=max(1, occurrences),
        evidence=ev,
        sources=sources,
    )


def _sync_ops(tr: Trace, syncs: list[tuple[float, float]], lo: float, hi: float) -> list[dict[str, Any]]:
    """The PyTorch operations that made the synchronising calls (Kineto traces record them as CPU
    ops: ``aten::item`` for ``.item()``, ``aten::to`` for ``.cpu()``): for each sync or D2H copy
    call in the window, the outermost CPU op around it. Empty when the trace has no CPU ops (Nsight
    Systems without PyTorch's NVTX)."""
    ops = tr.cpu_ops
    if ops is None or ops.empty or not syncs:
        return []
    starts, ends, names = ops["start"].to_numpy(), ops["end"].to_numpy(), ops["name"].astype(str).to_numpy()
    outers: set[int] = set()  # one op (aten::item) makes two calls (the D2H copy, then the sync)
    for s, e in syncs:
        if not lo <= s <= hi:
            continue
        inside = (starts <= s) & (ends >= e)
        if inside.any():
            idx = inside.nonzero()[0]
            outers.add(int(idx[starts[idx].argmin()]))
    counts: dict[str, int] = {}
    for i in outers:
        counts[names[i]] = counts.get(names[i], 0) + 1
    return sorted(({"op": k, "count": v} for k, v in counts.items()), key=lambda d: -d["count"])[:5]


def idle_owner(idle: dict) -> dict:
    """Which host state owns most of a timeline's idle GPU time (:func:`breakdown`'s parts, as a dict) and its
    share of the wall time: a launch-bound plan whose gaps are mostly the host's own work, or its waits, is
    not fixed by cheaper launches. Empty without a breakdown."""
    parts, window = idle.get("parts_ns") or {}, float(idle.get("window_ns") or 0.0)
    if not parts or window <= 0:
        return {}
    owner = max(parts, key=lambda k: float(parts[k] or 0.0))
    return {"idle_owner": owner, "idle_owner_pct": 100.0 * float(parts[owner] or 0.0) / window}
