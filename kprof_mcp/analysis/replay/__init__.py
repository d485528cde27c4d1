"""Timelines by replay (issue 36): the recorded run as a dependency graph, re-timed with a cause
removed. The gain of a cause is the recorded span over the replayed span, minus one: a what-if
computed on the run's own events, with no share fitted on calibration pairs.

* :mod:`.graph` — the graph (:func:`build`) of a :class:`~kprof_mcp.parsers.kineto.Trace` and a
  window: per host thread its CUDA calls and the host time between them, the GPU operations per
  stream with what bound each one's start, the waits and what each covered, the steps' starts; and
  :func:`replay`, which re-times a graph by one forward pass in recorded order (every dependency
  points to something recorded earlier: a discrete-event simulation with no queue to keep).
* :mod:`.transforms` — the what-ifs of the idle causes of :mod:`kprof_mcp.analysis.idle`.
* :mod:`.batch` — the what-if of batching a launch loop into one kernel.
* :mod:`.tail` — the what-if of evening out a kernel's partial last wave.
* :mod:`.floors` — the host's short gaps split between the launch and host causes by a lean eager op's
  measured cost.
* :mod:`.sampled` — the host's Python samples in the graph's host gaps, and the host work of a dropped
  read's statement.

The transforms (:data:`TRANSFORMS`), each returning a changed copy of the graph:

* ``sync`` — :func:`drop_syncs`: every wait but the window's last returns without waiting (the
  value stays on the GPU; the last read is the one the host needs), and where the host's Python was
  sampled, the host work of the statements that made those reads goes too (:mod:`.sampled`); where the
  plain pass measured what a read costs the host unprofiled (``read_ns``), each dropped read goes with
  that cost (:func:`~.transforms._reads_gone`).
* ``cuda_api`` — :func:`reuse_allocations`: ``cudaMalloc``/``cudaFree``/``cudaHostAlloc`` (and
  their driver forms) cost nothing: buffers are allocated once and reused; a CUDA graph built in the
  loop is built once: its capture's begin and end, the launches recorded into it (they run nothing),
  its instantiation and destruction cost nothing, nor the host work that issued the captured launches.
* ``copy`` — :func:`pin_copies`: tensors offloaded to the host and brought back in the same step
  (:func:`~.transforms.offloaded`: a download and a later upload of as many bytes) stay on the GPU, both copies and
  their waits gone; a pageable host-to-device copy becomes an asynchronous copy from
  pinned memory on a copy engine, prefetched a step ahead (its stream no longer waits for it): its
  GPU time is its bytes at the pinned bandwidth (the fastest pinned copy of 1 MiB or more in the
  trace, else :func:`pcie_bytes_per_s`), its host call costs a launch. A per-step device-to-host
  copy of a whole tensor (a snapshot) stays on the GPU: the copy, its wait and the host work that
  consumes it go. Where that host work ends in an upload (``round_trip_host_ns``: the data comes back
  up), it is not a snapshot but host compute in the data path; the diagnosis names the host then.
* ``launch`` — :func:`graph_launches`: a CUDA graph: the host issues one graph launch per
  occurrence (the window's fastest launch call) instead of a call per kernel, the other cheap calls
  and the dispatcher time between them (host stretches under ``HOST_WORK_MIN_NS``) cost nothing, and
  operations follow each other on their stream with no gap; a read of the GPU's values (a synchronise, a
  device-to-host copy waited for) cannot be captured: the host code after it stays, and the segment after it
  costs one more graph launch; the sampled host work of the statements that read stays (:mod:`.sampled`).
  Where the trace recorded what a lean eager op costs the host (``op_floor_ns``), each short gap keeps what lies
  above it: that is the host cause's (:mod:`.floors`).
* ``batch`` — :func:`batch_launches`: each run of eight or more launches of one kernel that fills
  part of the GPU is one launch at full fill, without the loop's host time (and, where the host's Python was
  sampled, without the loop statement's host work around the runs: the line their launches came from). The
  diagnosis takes it as the launch cause's other fix (the better of the two is the estimate).
* ``host`` — :func:`host_ahead`: the host's own stretches (``HOST_WORK_MIN_NS`` or longer) run on
  workers ahead of the loop, or on the GPU: they leave the critical path, and where the host's own
  work gains more than the copies do, the uploads of what it built with them (:func:`host_with_uploads`:
  pinned, on a copy engine, a step ahead). Not those that follow a
  read of the GPU's values (a synchronise, a device-to-host copy) before the GPU is fed again: that
  idle stretch is the sync's (idle.py gives it to ``sync``), and :func:`drop_syncs` overlaps it. Where the
  trace recorded what a lean eager op costs the host (``op_floor_ns``), the short gaps lose what lies above it
  too (:mod:`.floors`: a tracer, a subclass's ``__torch_function__``, hooks, per-op checks).
* ``host_sync`` — :func:`host_and_reads`: both at once, the host's stretches and its reads of the GPU's
  values (value checks between ops); neither alone moves a step whose host work reads between its
  stretches. Not a cause of its own: the diagnosis gives it to the host where the host owns more idle time.
* ``first_call`` — :func:`skip_first_calls`: module loading and first launches cost what a launch
  costs.
* ``tail`` — :func:`.tail.even_waves`: the launches of the kernel with the most time in partial last waves
  (1 ≤ waves < 4, the last under half full) take waves / ceil(waves) of their time (:mod:`.tail`); a
  kernel-side cause whose worth on a timeline is what the re-timed step gives it.

Not modelled: the launch queue's depth (a host that runs far ahead is not stopped after ~1,000
pending launches), arguments the trace does not record (which stream a synchronise names: the
covered operations stand for it; whether a run's items are independent), and a fix that changes the
GPU's own work (fusion).

**The profiler's own host time stays.** Under Nsight Systems the host runs slower: on the recorded
pairs a profiled step took 1.0× to 10× its unprofiled time, most in the fixed variants, whose host side
then bounds the step. That time is not in the API calls' recorded durations (bringing every call down
to the fastest of its name in the window moves the sync-per-step pair's estimate from +35.8 % to
+41.1 % for +78.3 % measured, and the launch-bound loop's the wrong way, +1122 % to +951 % for +1088 %):
it is in the host time between calls, Python's and the user's own, and nothing in the trace measures
what that time would be unprofiled. So no correction is applied: a host-side estimate is for the
profiled host, and a host-bound replayed step is an upper bound of the unprofiled one.

Pure: tables in, numbers out. Times are ns.
"""

from __future__ import annotations

from typing import Any, Callable

from ...parsers.kineto import Trace
from .batch import batch_launches, runs, summary
from .floors import excess
from .graph import Call, Graph, Op, Replayed, build, pcie_bytes_per_s, replay
from .tail import even_waves
from .tail import summary as tail_summary
from .transforms import (
    _bulk_d2h,
    drop_syncs,
    free_gpu,
    graph_launches,
    host_ahead,
    host_and_reads,
    host_with_uploads,
    offloaded,
    pin_copies,
    reuse_allocations,
    round_trip_host_ns,
    scale_host,
    skip_first_calls,
)

__all__ = [
    "TRANSFORMS",
    "Call",
    "Graph",
    "Op",
    "Replayed",
    "batch_launches",
    "build",
    "drop_syncs",
    "gains",
    "graph_launches",
    "host_ahead",
    "pcie_bytes_per_s",
    "pin_copies",
    "replay",
    "reuse_allocations",
    "runs",
    "scale_host",
    "skip_first_calls",
    "to_plain",
]

# The idle causes (analysis/diagnosis/timeline.py's keys) and the transform that removes each;
# ``batch`` is the launch cause's other fix.
TRANSFORMS: dict[str, Callable[[Graph], Graph]] = {
    "sync": drop_syncs,
    "host": host_ahead,
    "launch": graph_launches,
    "batch": batch_launches,
    "copy": pin_copies,
    "cuda_api": reuse_allocations,
    "first_call": skip_first_calls,
    "tail": even_waves,
}


def gains(
    tr: Trace,
    lo: float | None = None,
    hi: float | None = None,
    occurrences: int = 1,
    plain_ns: float | None = None,
    read_ns: float | None = None,
    op_floor_ns: float | None = None,
) -> dict[str, Any]:
    """Each cause's replayed step time (the timeline dict's ``idle["replay"]``): ``recorded_ns``
    (the window's span per occurrence), ``identity_ns`` (replayed with nothing removed: equal
    unless the graph missed a dependency), ``step_ns`` per cause, ``gpu_free_ns`` (every GPU
    operation at its floor: the host's own step, which bounds every kernel-side gain), the pinned bandwidth used, and
    ``batch``: the run of launches batching would make one (:func:`.batch.summary`); ``tail``: the kernel
    whose partial last waves evening out would shorten (:func:`.tail.summary`); each with its step only
    where the window has one. ``plain_ns``: the step timed without a profiler (nsys mode's plain pass,
    :mod:`kprof_mcp.engine.plain`): where the traced step is longer, the host's time is scaled down until the
    replay takes that long (:func:`to_plain`) and every what-if is replayed from there; ``base_ns`` is then the
    step the gains are taken against (else the recorded one), with ``plain_ns`` and ``host_scale``. ``read_ns``:
    what a read costs the host unprofiled, measured by the plain pass (``read_floor_ns``), which the sync
    what-if takes with each read it drops (:func:`~.transforms.drop_syncs`). ``op_floor_ns``: a lean eager op's
    issuing time per launch in the same trace (:func:`.floors.traced_op_floor`), which splits the host's short
    gaps between the launch cause and the host cause (:mod:`.floors`; ``op_floor_ns``, ``op_excess_share`` and
    ``host_per_launch_ns`` say how, in the host time the what-ifs are taken in)."""
    g = build(tr, lo, hi, occurrences)
    if not g.calls:
        return {}
    if read_ns and read_ns > 0:
        g.read_floor_ns = float(read_ns)
    if op_floor_ns and op_floor_ns > 0:
        g.op_floor_ns = float(op_floor_ns)
    recorded = g.recorded_span_ns() / g.occurrences
    g, scale = to_plain(g, plain_ns)
    run, tail = summary(g), tail_summary(g)
    skip = {c for c, found in (("batch", run), ("tail", tail)) if not found}
    steps = {cause: replay(g, t).step_ns for cause, t in TRANSFORMS.items() if cause not in skip}
    # The host's fix (data built on the GPU, or by workers with pinned memory) also takes the uploads of
    # what the host built off the critical path: both causes' time goes. The gain is the host's where its
    # own work is the larger of the two (the host alone gains more than the copies alone); else the
    # copies own it, and the host keeps its own gain.
    if steps.get("host") is not None and steps["host"] < steps.get("copy", steps["host"]):
        steps["host"] = min(steps["host"], replay(g, host_with_uploads).step_ns)
    if any(c.covers for c in g.calls):  # the host's work with its reads of the GPU's values
        steps["host_sync"] = replay(g, host_and_reads).step_ns
    identity = replay(g).step_ns
    out = {
        "recorded_ns": recorded,
        "d2h_bulk_ns": sum(o.dur for o in g.ops if _bulk_d2h(o)) / g.occurrences,
        "round_trip_host_ns": round_trip_host_ns(g) / g.occurrences,
        "identity_ns": identity,
        "step_ns": steps,
        "gpu_free_ns": replay(g, free_gpu).step_ns,
        "launch_floor_ns": g.launch_floor_ns,
        "pinned_h2d_bytes_per_s": g.pinned_h2d_bytes_per_s,
        "pinned_source": g.pinned_source,
    }
    if pairs := offloaded(g):  # tensors copied down and back up in a step: the copy what-if keeps them
        out["offload_copies"] = 2 * len(pairs) / g.occurrences
        out["offload_ns"] = sum(g.ops[d].dur + g.ops[u].dur for d, u in pairs.items()) / g.occurrences
    if scale is not None:
        out.update(plain_ns=float(plain_ns), host_scale=scale, base_ns=identity)
    if g.read_floor_ns > 0:
        out["read_floor_ns"] = g.read_floor_ns
    if g.op_floor_ns > 0:
        out.update(excess(g))
    if run:
        out["batch"] = run
    if tail:
        out["tail"] = tail
    return out


# The host's scale is found to this relative step (bisection). Where even PLAIN_MIN_SCALE leaves the replayed
# step longer than the plain one, what the plain pass saw is not the traced run's host made faster (its GPU
# work ran faster: another clock, another device state): the what-ifs stay against the traced step.
PLAIN_TOL = 0.002
PLAIN_MIN_SCALE = 0.05


def to_plain(g: Graph, plain_ns: float | None) -> tuple[Graph, float | None]:
    """``g`` with its host's time scaled (:func:`~.transforms.scale_host`) so that its replayed step is
    ``plain_ns`` (bisection on the scale, the step growing with it), and the scale; ``g`` and None where there
    is no plain step or the traced step is no longer than it (the tracer added nothing to undo)."""
    if not plain_ns or plain_ns <= 0:
        return g, None
    if replay(g).step_ns <= plain_ns * (1.0 + PLAIN_TOL):
        return g, None
    lo_a, hi_a = PLAIN_MIN_SCALE, 1.0
    if replay(scale_host(g, lo_a)).step_ns >= plain_ns:  # not the host's time: the trace is kept as it is
        return g, None
    while hi_a - lo_a > PLAIN_TOL:
        mid = 0.5 * (lo_a + hi_a)
        if replay(scale_host(g, mid)).step_ns > plain_ns:
            hi_a = mid
        else:
            lo_a = mid
    a = 0.5 * (lo_a + hi_a)
    return scale_host(g, a), a
