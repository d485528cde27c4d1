"""Communication as its own kind of time, per rank and per step, and the skew between the ranks
(issue 39, item 2), from the ranks' traces (:mod:`kprof_mcp.analysis.ranks`).

**What is communication** (:func:`comm_kind`, the one place names are recognised): on a GPU the
NCCL kernels (``ncclDevKernel_*``, ``ncclKernel_*``), each a collective from its start to its end;
on the CPU the backend's own range around each collective (``gloo:all_reduce`` on gloo's worker
thread; ``mpi:``, ``ucc:`` alike), from the issuing call (c10d's op, ``c10d::allreduce_``, on the
rank's thread: when the rank arrived) to the backend range's end. c10d's ops, ``record_param_comms``,
functional collectives (``_c10d_functional::``) and NCCL's ``nccl:`` ranges are communication too,
never compute. **Compute** is everything else the rank ran: on a GPU its other kernels (any stream),
on the CPU its other operators (any thread). **Host** time is the rest of the step (neither): the
host's own Python, data loading, a sleep.

**A step** is one iteration of the rank's ranges: the k-th occurrence of its most frequent selected
range (the first of a tie) with the ranges that follow it until the next occurrence (``step`` then
``sync``: one step); on a GPU widened to the kernels launched in it. The first ``warmup`` steps are
left out, as the stages' first occurrences are. Per rank and step: compute, communication,
**exposed** communication (not overlapped by the rank's compute on another stream or thread), the
**overlap** % and host time.

**Skew**: the ranks' collectives are matched by their order of issue within the step; at each, a
rank *arrives* when it issues it (CPU) or its kernel starts (GPU), on the wall clock (each trace's
origin). Each rank waits ``last arrival − its arrival``; the last rank is the straggler there, late
by ``last − second-last``. The job's straggler is the rank late for the most time in all; *why*:
its lead-up to each collective it was last at (from the end of its previous collective) against the
other ranks' median, split into more compute and more host work.

**What-ifs** by replaying the chain of collectives (:func:`replay`): each collective ends when its
last rank arrives plus its own transfer time (the median over the ranks of end − last arrival), each
rank's next arrival its lead-up work later. The straggler's what-if caps its lead-up at each
collective beyond the slowest other rank's (its excess) changed by what the advice does: more *compute*
is evened out over the ranks, the work conserved (each rank gets ``1/R`` of the excess: uneven shards move
work, they do not remove it; issue 39's held-back multi-rank set, where capping it was 7.6x over); more
*host* work is taken off the step (into data-loader workers, logging and checkpoints off the step);
gain = replayed period / replayed what-if − 1. A straggler
late by *host* time has only what its host did more than the others' (:func:`host_busy`: each step's
range on the host less the time the host waited in synchronising calls and in launches held by a full
queue) to even out: ranks whose hosts issue at one pace but one phase apart (the one ahead queues its
work; its GPU waits for the other's) are not a straggler (the held-back per-parameter all-reduce: 39.0
and 39.2 ms of host per step, rank 1 "late" 28.8 ms per step by the GPU's clock). Exposed
communication's what-if hides each rank's exposed transfer (exposed time less its waits) behind the
compute it does not overlap yet, bounded by it; the step shortens by the least any rank can hide.
Pure: traces in, figures (ns, %) out.
"""

from __future__ import annotations

import bisect
import math
import statistics
from dataclasses import dataclass, field, replace
from typing import Any

from ..parsers.kineto import Trace
from .comm_picture import PICTURE_SEGMENTS, _coarse, picture  # noqa: F401 (names kept here)
from .command import _leaves, selected
from .idle import SYNC_APIS
from .timeline import _intersect, _length, _union, cut

_COMM_KERNELS = ("ncclDevKernel", "ncclKernel")
_BACKEND_RANGES = ("gloo:", "mpi:", "ucc:")  # on the backend's worker thread, the whole collective
_ISSUE_OPS = ("c10d::", "_c10d_functional::", "c10d_functional::")  # on the rank's thread
_COMM_OTHER = ("record_param_comms", "nccl:", "ProcessGroupNCCL", "ProcessGroupGloo")


def comm_kind(name: str) -> str | None:
    """Which kind of communication event a name is: ``kernel`` (an NCCL kernel), ``backend`` (the
    backend's range around one collective), ``issue`` (c10d's op that issues it), ``other``
    (communication, never compute) or None (not communication)."""
    base = name[5:] if name.startswith("void ") else name
    if base.startswith(_COMM_KERNELS):
        return "kernel"
    if name.startswith(_BACKEND_RANGES):
        return "backend"
    if name.startswith(_ISSUE_OPS):
        return "issue"
    if name.startswith(_COMM_OTHER):
        return "other"
    return None


Intervals = list[tuple[float, float]]


@dataclass
class Collective:
    name: str
    arrival: float  # trace ns: the rank issued it (CPU) or its kernel started (GPU)
    end: float


@dataclass
class RankSteps:
    """One rank's kept steps and every collective it ran (trace ns, ``offset`` to the wall clock)."""

    label: str
    rank: int | None
    offset: float  # add to a trace time to get wall-clock ns (an int: epoch ns, exact)
    steps: list[tuple[float, float]]
    collectives: list[list[Collective]]  # per kept step, in order of issue
    compute: Intervals  # the rank's compute, as a union
    comm: Intervals  # its communication, as a union
    before: dict[int, float] = field(default_factory=dict)  # step -> the previous collective's end
    host_busy: list[float] = field(default_factory=list)  # per kept step: its host's own work (host_busy)


def _iterations(tr: Trace, include: list[str]) -> list[tuple[float, float]]:
    """Every step of the rank (see the module docstring), warm-up included."""
    if tr.ranges.empty:
        return []
    rows = [
        (float(r.start), float(r.end), str(r.name), getattr(r, "tid", None))
        for r in tr.ranges.itertuples()
        if selected(str(r.name), include) and comm_kind(str(r.name)) is None
    ]
    rows, _ = _leaves(rows)
    if not rows:
        return []
    rows.sort()
    count: dict[str, int] = {}
    for r in rows:
        count[r[2]] = count.get(r[2], 0) + 1
    first = max(count, key=lambda n: (count[n], -next(i for i, r in enumerate(rows) if r[2] == n)))
    starts = [r[0] for r in rows if r[2] == first]
    out = []
    for k, s in enumerate(starts):
        nxt = starts[k + 1] if k + 1 < len(starts) else math.inf
        out.append((s, max(r[1] for r in rows if s <= r[0] < nxt)))
    return out


def _collectives(tr: Trace, lo: float, hi: float) -> tuple[list[Collective], Intervals]:
    """The collectives issued in [lo, hi) and the rank's compute launched or run there: on a GPU its
    kernels (NCCL's the collectives; a gloo collective of CPU tensors where it launched none), else its
    CPU operators and the backend's collectives."""
    if not tr.kernels.empty:  # a GPU rank: its kernels, by launch (correlation) where it was recorded
        part = cut(tr, lo, hi - 1e-3) if not tr.api.empty else tr
        ks = part.kernels
        if tr.api.empty:
            ks = ks[(ks["start"] >= lo) & (ks["start"] < hi)]
        comm = [
            Collective(str(k.name), float(k.start), float(k.end))
            for k in ks.itertuples()
            if comm_kind(str(k.name)) == "kernel"
        ]
        compute = [(float(k.start), float(k.end)) for k in ks.itertuples() if comm_kind(str(k.name)) is None]
        if comm or compute:
            return sorted(comm, key=lambda c: c.arrival) or _cpu_collectives(tr, lo, hi, False), compute
    ops = tr.cpu_ops
    compute = []
    if not ops.empty:
        d = ops[(ops["start"] >= lo) & (ops["start"] < hi)]
        compute = [(float(r.start), float(r.end)) for r in d.itertuples() if comm_kind(str(r.name)) is None]
    return _cpu_collectives(tr, lo, hi, True), compute


def _cpu_collectives(tr: Trace, lo: float, hi: float, issue_alone: bool) -> list[Collective]:
    """The backend's collectives issued in [lo, hi) (gloo's ranges), each from its issuing c10d op
    when they pair one to one; without backend ranges, the c10d ops alone (``issue_alone``)."""

    def rows(df, kind):
        if df.empty:
            return []
        d = df[(df["start"] >= lo) & (df["start"] < hi)]
        return [
            (float(r.start), float(r.end), str(r.name), r.tid)
            for r in d.itertuples()
            if comm_kind(str(r.name)) == kind
        ]

    backend = sorted(rows(tr.ranges, "backend"))
    issue = sorted(rows(tr.cpu_ops, "issue"))
    issue = [  # the outermost: a functional collective's c10d op inside it is the same collective
        r
        for r in issue
        if not any(
            o is not r and o[3] == r[3] and o[0] <= r[0] and r[1] <= o[1] and (o[0], o[1]) != (r[0], r[1])
            for o in issue
        )
    ]
    if backend and len(issue) == len(backend):  # the rank arrived when it issued the collective
        return [Collective(b[2], i[0], max(b[1], i[1])) for i, b in zip(issue, backend)]
    return [Collective(r[2], r[0], r[1]) for r in (backend or (issue if issue_alone else []))]


def rank_steps(
    label: str, rank: int | None, tr: Trace, origin_ns: int | None, include: list[str], warmup: int
) -> RankSteps:
    """One rank's steps, collectives, compute and communication (see the module docstring)."""
    its = _iterations(tr, include)
    skip = warmup if len(its) > warmup else 0
    steps, colls, compute, comm = [], [], [], []
    before: dict[int, float] = {}
    last_end: float | None = None
    for k, (s, e) in enumerate(its):
        hi = its[k + 1][0] if k + 1 < len(its) else math.inf
        cs, cp = _collectives(tr, s, hi)
        if k >= skip:
            kept = len(steps)
            if last_end is not None:
                before[kept] = last_end
            ends = [c.end for c in cs] + [x[1] for x in cp]
            lo = min([s] + [c.arrival for c in cs] + [x[0] for x in cp])
            hi_k = max([e] + ends)
            if steps:  # a GPU's step starts once the last one's kernels are done (no time counted twice)
                lo = min(max(lo, steps[-1][1]), hi_k)
            steps.append((lo, hi_k))
            colls.append(cs)
            compute += cp
            comm += [(c.arrival, c.end) for c in cs]
        if cs:
            last_end = cs[-1].end
    kept = its[skip:]
    busy = host_busy(tr, kept) if kept else []
    return RankSteps(
        label, rank, int(origin_ns or 0), steps, colls, _union(compute), _union(comm), before, busy
    )


# Host calls that wait rather than work: the synchronising ones and the copies that block.
_WAITING = (*SYNC_APIS, "cudaMemcpy", "cudaMemcpy2D", "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH")
_LAUNCHES = ("cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx", "cudaLaunchKernelExC")


def host_busy(tr: Trace, spans: list[tuple[float, float]]) -> list[float]:
    """Each span's (a step's range on the host) own host work: its length less the time its host
    waited in it, in synchronising calls and blocking copies (whole) and in kernel launches beyond the
    trace's median launch (a launch held while the queue is full). Empty without CUDA API calls."""
    api = tr.api
    if api is None or getattr(api, "empty", True):
        return []
    names = api["name"].astype(str)
    waits = api[names.isin(_WAITING)]
    launches = api[names.str.startswith(_LAUNCHES)]
    typical = float(launches["dur"].median()) if len(launches) else 0.0
    held = launches[launches["dur"] > typical]
    iv = [(float(a), float(b)) for a, b in zip(waits["start"], waits["end"])]
    iv += [(float(a) + typical, float(b)) for a, b in zip(held["start"], held["end"])]
    waited = _union(iv)
    return [max(0.0, (e - s) - _intersect(waited, [(s, e)])) for s, e in spans]


def _within(iv: Intervals, lo: float, hi: float) -> float:
    """The time of the union ``iv`` (sorted, disjoint) inside [lo, hi): found by bisection, not a walk
    from the start (a collective's lead-up on every rank of every step: quadratic in the trace)."""
    if hi <= lo:
        return 0.0
    i = max(0, bisect.bisect_right(iv, (lo, math.inf)) - 1)  # the last interval starting at or before lo
    total = 0.0
    while i < len(iv) and iv[i][0] < hi:
        s, e = iv[i]
        total += max(0.0, min(e, hi) - max(s, lo))
        i += 1
    return total


def _clipped(iv: Intervals, s: float, e: float) -> Intervals:
    """The union ``iv`` (sorted, disjoint) clipped to [s, e]."""
    i = max(0, bisect.bisect_right(iv, (s, math.inf)) - 1)
    out = []
    while i < len(iv) and iv[i][0] < e:
        a, b = iv[i]
        if b > s:
            out.append((max(a, s), min(b, e)))
        i += 1
    return out


def _breakdown(r: RankSteps, k: int) -> dict[str, float]:
    """Step k of one rank: its time, compute, communication, exposed communication and host time."""
    s, e = r.steps[k]
    comp, comm = _clipped(r.compute, s, e), _clipped(r.comm, s, e)
    c, m = _length(comp), _length(comm)
    both = _intersect(comp, comm)
    return {
        "step_ns": e - s,
        "compute_ns": c,
        "comm_ns": m,
        "exposed_ns": m - both,
        "host_ns": max(0.0, (e - s) - _length(_union(comp + comm))),
    }


def breakdowns(r: RankSteps) -> list[dict[str, float]]:
    """Every kept step of one rank, each as :func:`communication` counts it before taking medians
    (ns: step, compute, comm, exposed, host; the step's bounds ``lo``/``hi`` in trace ns)."""
    return [_breakdown(r, k) | {"lo": r.steps[k][0], "hi": r.steps[k][1]} for k in range(len(r.steps))]


def _median(v: list[float]) -> float:
    return float(statistics.median(v)) if v else 0.0


def replay(work: list[list[float]], transfer: list[float], start: list[float]) -> float:
    """The chain of collectives replayed: collective c ends at max over ranks of (the previous end,
    or the rank's own ``start`` for the first) + ``work[c][rank]``, plus ``transfer[c]``. Returns the
    last end less the earliest start (the period the chain takes)."""
    t = list(start)
    end = min(start) if start else 0.0
    for w, x in zip(work, transfer):
        end = max(ti + wi for ti, wi in zip(t, w)) + x
        t = [end] * len(t)
    return end - (min(start) if start else 0.0)


def communication(ranks: list[RankSteps]) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """Per rank (by label) its medians per step (step, compute, comm, exposed, overlap %, host,
    wait, late) and the job's summary (steps, collectives per step, the straggler and the exposed
    communication with their what-ifs, notes); ({}, {}) when no rank ran a collective."""
    ranks = [r for r in ranks if r.steps]
    if len(ranks) < 2 or not any(any(cs) for r in ranks for cs in r.collectives):
        return {}, {}
    # The ranks' clocks from the earliest origin: epoch ns (~1.8e18) plus a trace time in floats would
    # keep only multiples of 256 ns.
    base = min(int(r.offset) for r in ranks)
    ranks = [replace(r, offset=float(int(r.offset) - base)) for r in ranks]
    notes: list[str] = []
    n = min(len(r.steps) for r in ranks)
    if len({len(r.steps) for r in ranks}) > 1:
        notes.append(
            f"the ranks ran {sorted({len(r.steps) for r in ranks})} steps: the first {n} of each are matched"
        )
    per = {r.label: [_breakdown(r, k) for k in range(n)] for r in ranks}
    wait = {r.label: [0.0] * n for r in ranks}
    late = {r.label: [0.0] * n for r in ranks}
    lead = {r.label: [[0.0, 0.0] for _ in range(n)] for r in ranks}  # straggler's extra (compute, host)
    last_count = {r.label: 0 for r in ranks}
    work: list[list[float]] = []
    transfer: list[float] = []
    start: list[float] = []
    matched = 0
    uneven = False
    for k in range(n):
        cs = [r.collectives[k] for r in ranks]
        m = min(len(c) for c in cs)
        uneven |= len({len(c) for c in cs}) > 1
        for c in range(m):
            arr = [r.offset + r.collectives[k][c].arrival for r in ranks]
            ends = [r.offset + r.collectives[k][c].end for r in ranks]
            prev = []
            for r in ranks:
                if c:
                    prev.append(r.offset + r.collectives[k][c - 1].end)
                elif k in r.before:
                    prev.append(r.offset + r.before[k])
                else:
                    prev.append(r.offset + r.steps[k][0])
            order = sorted(range(len(ranks)), key=lambda i: arr[i])
            last, second = order[-1], order[-2]
            for i, r in enumerate(ranks):
                wait[r.label][k] += arr[last] - arr[i]
            lab = ranks[last].label
            late[lab][k] += arr[last] - arr[second]
            last_count[lab] += 1
            # Why it was late: its lead-up against the others' (compute and host time, median).
            split = []
            for i, r in enumerate(ranks):
                lo, hi = prev[i] - r.offset, arr[i] - r.offset
                comp = _within(r.compute, lo, hi)
                split.append((comp, max(0.0, hi - lo - comp - _within(r.comm, lo, hi))))
            others = [split[i] for i in range(len(ranks)) if i != last]
            lead[lab][k][0] += split[last][0] - _median([o[0] for o in others])
            lead[lab][k][1] += split[last][1] - _median([o[1] for o in others])
            if not matched:
                start = prev[:]  # the chain starts where the first matched collective's lead-up does
            work.append([a - p for a, p in zip(arr, prev)])
            transfer.append(max(0.0, _median([e - arr[last] for e in ends])))
            matched += 1
    if uneven:
        notes.append(
            "the ranks issued different numbers of collectives in some steps: the first of each are matched"
        )
    rows: dict[str, dict[str, float]] = {}
    for r in ranks:
        b = per[r.label]
        comm = [x["comm_ns"] for x in b]
        exposed = [x["exposed_ns"] for x in b]
        rows[r.label] = {
            "step_ns": _median([x["step_ns"] for x in b]),
            "compute_ns": _median([x["compute_ns"] for x in b]),
            "comm_ns": _median(comm),
            "exposed_ns": _median(exposed),
            "overlap_pct": 100.0 * (1.0 - sum(exposed) / sum(comm)) if sum(comm) > 0 else None,
            "host_ns": _median([x["host_ns"] for x in b]),
            "wait_ns": _median(wait[r.label]),
            "late_ns": _median(late[r.label]),
            "collectives": _median([float(len(r.collectives[k])) for k in range(n)]),
        }
    period = replay(work, transfer, start)
    summary: dict[str, Any] = {
        "ranks": len(ranks),
        "steps": n,
        "collectives": matched,
        "period_ns": period / n if n else 0.0,
        "recorded_period_ns": _median([x["step_ns"] for r in ranks for x in per[r.label]]),
        "straggler": _straggler(ranks, late, last_count, lead, work, transfer, start, period, n, matched),
        "exposed": _exposed(ranks, per, wait, n),
        "notes": notes,
    }
    summary["picture"] = picture(ranks, per, n, (summary["straggler"] or {}).get("label"))
    return rows, summary


def _straggler(
    ranks, late, last_count, lead, work, transfer, start, period, n, matched
) -> dict[str, Any] | None:
    """The rank late for the most time in all, how late per step, why, and the what-if with its extra
    lead-up work evened out over the ranks (see the module docstring)."""
    total = {lab: sum(v) for lab, v in late.items()}
    lab = max(total, key=lambda x: total[x])
    if total[lab] <= 0 or period <= 0:
        return None
    s = next(i for i, r in enumerate(ranks) if r.label == lab)
    extra_compute = _median([lead[lab][k][0] for k in range(n)])
    extra_host = _median([lead[lab][k][1] for k in range(n)])
    why = "host" if extra_host >= extra_compute else "compute"
    R = len(ranks)
    target = max(extra_compute, 0.0) if why == "compute" else max(extra_host, 0.0)
    host_more = None
    if why == "host" and all(len(r.host_busy) >= n for r in ranks):
        mine = _median(ranks[s].host_busy[:n])
        others = _median([_median(r.host_busy[:n]) for i, r in enumerate(ranks) if i != s])
        host_more = max(0.0, mine - others)
        target = min(target, host_more)
    # The lead-up beyond the slowest other rank's at each collective, scaled so that a step loses no
    # more than the straggler's measured extra work (a rank ahead queues its work, its lead-ups on the
    # GPU's clock are short, and the excess on that clock overstates the straggler's own)
    excess = [max(0.0, w[s] - max(w[j] for j in range(R) if j != s)) for w in work]
    scale = min(1.0, target * n / sum(excess)) if sum(excess) > 0 else 0.0
    # compute is evened out (the work conserved: uneven shards); host work is taken off the step
    # (what the advice says: data loading into workers, logging and checkpoints off the step)
    keep = 1.0 / R if why == "compute" else 0.0
    evened = [
        [w[i] - x * scale * (1 - keep) if i == s else w[i] + x * scale * keep for i in range(R)]
        for w, x in zip(work, excess)
    ]
    whatif = replay(evened, transfer, start)
    out = {
        "label": lab,
        "rank": ranks[s].rank,
        "late_ns": _median(late[lab]),
        "last_pct": 100.0 * last_count[lab] / matched if matched else 0.0,
        "extra_compute_ns": extra_compute,
        "extra_host_ns": extra_host,
        "why": why,
        "replay_ns": period / n,
        "whatif_ns": whatif / n,
        "share": max(0.0, 1.0 - whatif / period),
    }
    if host_more is not None:
        out["host_more_ns"] = host_more  # its host's own work per step beyond the others' (host_busy)
    return out


def _exposed(ranks, per, wait, n) -> dict[str, Any] | None:
    """The communication no compute overlaps beyond the waits (the transfer itself), what hiding it
    behind the rank's free compute would save per step, and the rank with the most of it."""
    if not n:
        return None
    saving, step, most = 0.0, 0.0, {}
    for k in range(n):
        hide = []
        for r in ranks:
            b = per[r.label][k]
            transfer = max(0.0, b["exposed_ns"] - wait[r.label][k])
            free = max(0.0, b["compute_ns"] - (b["comm_ns"] - b["exposed_ns"]))
            hide.append(min(transfer, free))
            most[r.label] = most.get(r.label, 0.0) + transfer
        saving += min(hide)
        step += max(per[r.label][k]["step_ns"] for r in ranks)
    lab = max(most, key=lambda x: most[x])
    if most[lab] <= 0 or step <= 0:
        return None
    r = next(x for x in ranks if x.label == lab)
    comm = sum(per[lab][k]["comm_ns"] for k in range(n))
    exposed = sum(per[lab][k]["exposed_ns"] for k in range(n))
    return {
        "label": lab,
        "rank": r.rank,
        "transfer_ns": most[lab] / n,
        "hideable_ns": saving / n,
        "overlap_pct": 100.0 * (1.0 - exposed / comm) if comm > 0 else None,
        "share": saving / step,
    }
