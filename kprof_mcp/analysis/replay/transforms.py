"""The what-ifs of the replay, one per idle cause (the package's docstring lists them): each returns
a changed copy of the graph, which :func:`~kprof_mcp.analysis.replay.graph.replay` re-times."""

from __future__ import annotations

from typing import Any

from ..idle import HOST_WORK_MIN_NS, JIT_LOAD_PREFIXES, jit_every_step
from ..timeline import CAPTURE_BEGIN, LAUNCH_APIS
from .batch import batch_copies
from .floors import above_floor
from .graph import MIB, Call, Graph, Op, _copy, _h2d, _pageable, own
from .sampled import statements, statements_cut, thread_order


def drop_syncs(g: Graph) -> Graph:
    """Every wait but the window's last returns without waiting (see the package docstring), and where the
    host's Python was sampled, the host work of the statements that made those reads goes with them
    (:mod:`.sampled`). A synchronize that found nothing to wait for (a second one in a row, one after a
    blocking copy) is a read the code makes all the same: it goes with the others, and with it its cost to
    the host (:func:`_reads_gone`)."""
    g = _copy(g)
    waits = [i for i, c in enumerate(g.calls) if c.covers and _is_read(g, c)]
    last = waits[-1] if waits else -1
    idle_syncs = [i for i, c in enumerate(g.calls) if c.kind == "sync" and not c.covers and i < last]
    for i in waits[:-1]:
        c = own(g.calls, i)
        c.covers, c.dur = [], c.ret
    cut = statements_cut(g.calls, g.samples, waits[:-1], own)
    if g.read_floor_ns > 0:
        _reads_gone(g, sorted(waits[:-1] + idle_syncs), cut)
    return g


def _reads_gone(g: Graph, dropped: list[int], cut: float) -> None:
    """Where the plain pass measured what a read costs the host unprofiled (``read_floor_ns``: a synchronize
    with nothing to wait for, in the command's own process), each dropped read's call goes, and with it that
    cost: the part the replay does not already give the call (its host time after the wait, scaled to the plain
    step) comes off the host gap before it, no more than the gap holds, less what the statements' sampled host
    work already took (:func:`statements_cut`: the larger of the two estimates counts, not their sum). The trace
    cannot give that cost: under Nsight Systems a synchronize costs the host ~11 us of which its call shows
    2.2 us, against 4.7-7.2 us unprofiled (an H200: docs/evidence/machine-model/nsys_call_overhead_2026-11-29)."""
    # one read a statement: a synchronise right after a device-to-host copy of the same thread is that copy's
    # wait (``.item()``, ``.cpu()``: cudaMemcpyAsync then cudaStreamSynchronize), not a read of its own
    before = {j: i for i, j in thread_order(g.calls).items()}
    gone = set(dropped)
    need = {
        i: 0.0
        if g.calls[i].kind == "sync" and (k := before.get(i)) in gone and g.calls[k].kind == "copy"
        else max(0.0, g.read_floor_ns - g.calls[i].ret)
        for i in dropped
    }
    want = sum(need.values()) - cut
    total = sum(need.values())
    for i in dropped:
        c = own(g.calls, i)
        c.dur = c.ret = 0.0
        if want > 0 and total > 0:
            c.gap -= min(c.gap, want * need[i] / total)


def reuse_allocations(g: Graph) -> Graph:
    """Buffers allocated once and reused, a library's plan or handle made once and kept (its modules loaded
    and unloaded at every step: :func:`~kprof_mcp.analysis.idle.modules_cycled`), and a CUDA graph built in the
    loop built once and replayed: the allocation calls and the loads cost nothing, and so do the graph's
    construction calls (capture, instantiate, destroy)
    with the launches recorded into its capture and the host work that issued them (the gap before each call
    inside the capture: the code that runs only to record the graph)."""
    g = _copy(g)
    for i, c in enumerate(g.calls):
        if c.kind in ("alloc", "capture"):
            c = own(g.calls, i)
            c.covers, c.dur, c.ret = [], 0.0, 0.0
            if c.kind == "capture" and not c.name.startswith(CAPTURE_BEGIN):
                c.gap = 0.0
    return g


def _bulk_d2h(o: Op) -> bool:
    """A pageable device-to-host copy of a whole tensor (1 MiB or more): a per-step snapshot, not a value
    the host reads to decide (``.item()`` and small reads are the sync cause's)."""
    return o.kind == "memcpy" and _pageable(o.name) and "DtoH" in o.name and o.nbytes >= MIB


def offloaded(g: Graph) -> dict[int, int]:
    """Tensors offloaded and brought back in the same step (``torch.autograd.graph.save_on_cpu``, a CPU
    offload of activations or optimizer state): a device-to-host copy of 1 MiB or more, and later in the same
    occurrence (no step's start between them) a host-to-device copy of as many bytes, the last such download
    matched first (what the backward reloads first is what the forward saved last). {download op: upload op}.
    Equal sizes are the trace's only evidence that the bytes are the same: a download of a result followed in
    the same step by an upload of a new input of the same size would match too."""
    pending: dict[float, list[int]] = {}
    pairs: dict[int, int] = {}
    cut = 0
    for j in sorted(range(len(g.ops)), key=lambda k: g.calls[g.ops[k].call].start):
        # The host's issue time: the steps' starts are the host's (an op runs after its step's start has passed).
        o, issued = g.ops[j], g.calls[g.ops[j].call].start
        while cut < len(g.cuts) and g.cuts[cut] <= issued:  # a new occurrence: nothing pending carries over
            pending, cut = {}, cut + 1
        if o.kind != "memcpy" or o.nbytes < MIB:
            continue
        if "DtoH" in o.name:
            pending.setdefault(o.nbytes, []).append(j)
        elif _h2d(o.name) and pending.get(o.nbytes):
            d = pending[o.nbytes].pop()
            if g.ops[d].end <= o.start:
                pairs[d] = j
    return pairs


def pin_copies(g: Graph, uploads_only: bool = False) -> Graph:
    """Pageable host-to-device copies pinned and prefetched on a copy engine (and pinned uploads of 1 MiB
    or more issued on a stream that runs kernels, where copy and compute take turns: prefetched a step
    ahead on a side stream, they overlap the compute); per-step device-to-host
    copies of whole tensors (``.cpu()`` of a tensor for logging) kept on the GPU: the copy and its wait
    go (the values are read once, after the loop), and so does the host's work that consumes them.

    That work is the host time from the copy's return to the thread's next CUDA call past the
    synchronise PyTorch adds after the copy (and, when none follows, the thread's tail): the code that
    has the snapshot in hand — converting, logging or inspecting it, and for a pageable snapshot the
    release of the previous step's host buffer and the first touch of the next one's pages. With the
    snapshot kept on the GPU there is nothing on the host to consume until after the loop (a value read
    from it is read on the GPU), so that stretch leaves the step with the copy. Only after a copy of a
    whole tensor (:func:`_bulk_d2h`): the host work after a small read (``.item()``) depends on the
    value and stays (:func:`drop_syncs` overlaps it with the GPU). The trace does not say what the host
    did: work that merely follows the snapshot (the next batch made on the host) would go with it.

    Tensors offloaded to the host and brought back in the same step (:func:`offloaded`) stay on the GPU: both
    copies, their waits and the synchronise after each go (legal where they fit in device memory: the reason to
    offload is memory, which the trace does not record).

    ``uploads_only``: the host-to-device half alone (the host cause's fix takes its uploads with it:
    :func:`host_ahead`)."""
    g = _copy(g)
    pairs = {} if uploads_only else offloaded(g)
    kept = set(pairs) | set(pairs.values())  # offloaded and brought back: kept on the GPU, neither copy made
    compute = {o.stream for o in g.ops if o.kind == "kernel"}
    after: dict[Any, bool] = {}  # a thread's last call was a pageable copy made asynchronous
    consumer: dict[Any, bool] = {}  # a snapshot's copy returned; the host work consuming it runs
    for i, c in enumerate(g.calls):
        if consumer.get(c.tid):
            c = own(g.calls, i)
            c.gap = 0.0
            if c.kind != "sync":  # the synchronise PyTorch adds after the copy is the copy's own
                consumer.pop(c.tid)
        if c.ops and all(j in kept for j in c.ops):
            for j in c.ops:
                own(g.ops, j).dur = 0.0
            c = own(g.calls, i)
            c.covers, c.dur, c.ret = [], min(c.dur, g.launch_floor_ns), min(c.ret, g.launch_floor_ns)
            after[c.tid] = True  # the synchronise PyTorch adds after the copy goes with it
            continue
        bulk = [] if uploads_only else [j for j in c.ops if _bulk_d2h(g.ops[j])]
        for j in bulk:
            own(g.ops, j).dur = 0.0
        if bulk:
            c = own(g.calls, i)
            c.covers, c.dur, c.ret = [], min(c.dur, g.launch_floor_ns), min(c.ret, g.launch_floor_ns)
            after[c.tid] = consumer[c.tid] = True
            continue
        pageable = [
            j
            for j in c.ops
            if g.ops[j].kind == "memcpy"
            and _pageable(g.ops[j].name)
            and (_h2d(g.ops[j].name) or not uploads_only)
        ]
        for j in pageable:
            o = own(g.ops, j)
            if o.nbytes > 0:
                o.dur = min(o.dur, o.nbytes / g.pinned_h2d_bytes_per_s * 1e9)
            if _h2d(o.name):  # prefetched on a copy engine: its stream no longer waits for it
                o.stream = ("copy engine", "HtoD")
        for j in c.ops:  # a pinned upload of a batch on the compute's stream: prefetched on a side stream
            o = g.ops[j]
            if o.kind == "memcpy" and _h2d(o.name) and o.nbytes >= MIB and o.stream in compute:
                own(g.ops, j).stream = ("copy engine", "HtoD")
        if pageable and all(_h2d(g.ops[j].name) for j in pageable):
            c = own(g.calls, i)
            c.covers, c.dur = [], min(c.dur, g.launch_floor_ns)
            after[c.tid] = True
        elif after.pop(c.tid, False) and c.kind == "sync":
            c = own(g.calls, i)
            c.covers, c.dur = [], c.ret  # the synchronise PyTorch adds after a pageable copy goes with it
    # Ops that followed a prefetched copy on its old stream follow the op before it instead.
    moved = {j for j, o in enumerate(g.ops) if o.stream == ("copy engine", "HtoD")}
    last_copy = None
    for j, o in enumerate(g.ops):
        prev = o.prev
        while prev in moved and j not in moved:
            prev = g.ops[prev].prev
        if j in moved:
            prev, last_copy = last_copy, j
        if prev != o.prev:
            own(g.ops, j).prev = prev
    g.tails = {t: (0.0 if consumer.get(t) else v) for t, v in g.tails.items()}
    return batch_copies(g)  # runs of small copies as one transfer (the same cause's other fix)


def round_trip_host_ns(g: Graph) -> float:
    """The host's work between a per-step device-to-host copy of a whole tensor (:func:`_bulk_d2h`) and an
    upload: the stretch :func:`pin_copies` takes with the snapshot (the gaps from the copy's return to the
    thread's next CUDA call past the synchronise PyTorch adds after it), counted where that next call copies
    host-to-device (the first call after the copy that puts work on the GPU: calls that queue none, such as
    ``cudaStreamIsCapturing``, are passed over). Data that goes down, is worked on by the host and comes back
    up is not a snapshot: the host computes in the model's data path (a module or an op left on the CPU), and
    the fix that removes the copies — the work on the GPU — removes that host work too. Summed over the
    window (ns)."""
    total = 0.0
    pending: dict[Any, list] = {}  # per thread, after a bulk copy returned: [host time taken, stretch closed]
    for c in g.calls:
        if (p := pending.get(c.tid)) is not None:
            if not p[1]:
                p[0] += c.gap
                p[1] = c.kind != "sync"
            if c.ops:
                del pending[c.tid]
                if any(g.ops[j].kind == "memcpy" and _h2d(g.ops[j].name) for j in c.ops):
                    total += p[0]
        if any(_bulk_d2h(g.ops[j]) for j in c.ops):
            pending[c.tid] = [0.0, False]
    return total


def graph_launches(g: Graph) -> Graph:
    """The launches captured as a CUDA graph: the host issues one graph launch per occurrence (the
    window's fastest launch call) instead of a call per kernel, with no Python or dispatcher time between
    them, and the GPU runs the kernels back to back, none shorter than the device's measured launch
    floor (an empty kernel: 0.83 µs on an H100). A graph cannot hold a host read of the GPU's values (a
    synchronise, a device-to-host copy the host waits for: :func:`_is_read`): each read ends a captured segment,
    the host code after it (what the value decides) stays, and the segment after it costs one more graph launch;
    where the host's Python was sampled, the host work of the statements that read (:mod:`.sampled`) stays too:
    they run on the host at every step, graph or not."""
    reads = [i for i, c in enumerate(g.calls) if c.covers and c.kind != "launch" and _is_read(g, c)]
    near, share = statements(g.calls, g.samples, reads)
    keep = dict.fromkeys(near, share)
    over = above_floor(g)  # the host's own part of each short gap (.floors)
    g = _copy(g)
    after_read: set = set()  # threads whose next launch starts a new segment
    for i, c in enumerate(g.calls):
        if c.covers and c.kind != "launch" and _is_read(g, c):  # (a launch that waited is the launch cause's)
            after_read.add(c.tid)
            continue
        if c.kind in ("launch", "memset", "other"):
            first = c.kind in ("launch", "memset") and c.tid in after_read
            c = own(g.calls, i)
            if c.gap < HOST_WORK_MIN_NS and not first:  # the host's own work above an eager op's stays
                c.gap *= max(keep.get(i, 0.0), over.get(i, 0.0))
            if first:  # a new segment: one graph launch
                after_read.discard(c.tid)
                c.dur = c.ret = min(c.dur, g.launch_floor_ns)
            elif c.kind in ("launch", "memset") or not c.covers:
                c.dur = c.ret = 0.0
    first_issue = min((p.issue for p in g.ops), default=0.0)  # once: per op it made this O(ops²)
    for j in range(len(g.ops)):
        o = own(g.ops, j)
        o.gap = 0.0
        o.issue = min(o.issue, first_issue)
        if o.kind == "kernel":
            o.dur = max(o.dur, g.gpu_floor_ns)
    g.tails = {t: v + g.launch_floor_ns * g.occurrences / max(1, len(g.tails)) for t, v in g.tails.items()}
    return g


def _is_read(g: Graph, c: Call) -> bool:
    """A synchronise, a copy the host waits for that is not a host-to-device one (the host reads a value
    of the GPU's), or a launch that waited for its own kernel (idle.py's ``sync`` state)."""
    return c.kind == "sync" or (
        c.kind in ("copy", "launch") and bool(c.covers) and not any(_h2d(g.ops[j].name) for j in c.ops)
    )


def _ahead(g: Graph, waited_only: bool) -> Graph:
    """The host's stretches off the critical path in ``g`` (changed in place through :func:`own`), but those
    after a read of the GPU's values before the GPU is fed again; ``waited_only``: only a read that still
    waits (``covers``) counts."""
    drained: dict[Any, bool] = {}  # the thread read a GPU value and has not fed the GPU since
    jit = jit_production(g)  # a module's production is the one-off calls' cause, not the host's
    over = above_floor(g)
    for i, c in enumerate(g.calls):
        if c.gap >= HOST_WORK_MIN_NS and not drained.get(c.tid) and i not in jit:
            own(g.calls, i).gap = 0.0
        elif over.get(i) and not drained.get(c.tid):  # the host's own part above an eager op's (.floors)
            own(g.calls, i).gap = c.gap * (1.0 - over[i])
        if (c.covers or not waited_only) and _is_read(g, c):
            drained[c.tid] = True
        elif c.ops:
            drained[c.tid] = False
    g.tails = {t: (0.0 if v >= HOST_WORK_MIN_NS and not drained.get(t) else v) for t, v in g.tails.items()}
    return g


def host_ahead(g: Graph) -> Graph:
    return _ahead(_copy(g), waited_only=False)


def host_and_reads(g: Graph) -> Graph:
    """:func:`host_ahead` where the host's work includes its reads of the GPU's values: the checks it makes
    (a value read, tested, the next op launched) go with the work, so the waits go too (:func:`drop_syncs`)
    and no stretch is held back as following a read, but those after the window's last wait, which stays.
    Neither cause's own what-if moves such a step: without the reads the host work still sets it, without
    the host work the reads still drain the queue. One fix removing both causes' time (:func:`~.gains` keeps
    it apart; the diagnosis gives it to the host where the host owns more of the idle time than the syncs)."""
    return _ahead(drop_syncs(g), waited_only=True)


def host_with_uploads(g: Graph) -> Graph:
    """:func:`host_ahead` with the uploads of what the host built: data made on the GPU needs none, data
    made by workers ahead of the loop is uploaded from pinned memory on a copy engine a step ahead
    (``pin_memory``): the pageable host-to-device copies become :func:`pin_copies`' (its device-to-host
    half is not the host cause's). One fix removing two causes' time (:func:`~.gains` says when it is
    the host's)."""
    return host_ahead(pin_copies(g, uploads_only=True))


def skip_first_calls(g: Graph) -> Graph:
    """One-off calls (module loads, first launches, ...) cost nothing, nor does the host work that produced an
    explicitly loaded module (:data:`~kprof_mcp.analysis.idle.JIT_LOAD_PREFIXES`: the stretch of host work
    before the load — a JIT's compile, hash and cache lookup; a kernel built at every step pays it at every
    step)."""
    g = _copy(g)
    jit = jit_production(g)
    for i, c in enumerate(g.calls):
        if c.kind == "first":
            c = own(g.calls, i)
            c.dur = c.ret = min(c.dur, g.launch_floor_ns) if c.name in LAUNCH_APIS else 0.0
            if i in jit:
                c.gap = 0.0
    return g


def jit_production(g: Graph) -> set[int]:
    """The calls whose host stretch before them is a module's production (:func:`~kprof_mcp.analysis.idle.
    jit_every_step`): explicit module loads after host work, where the window loads at least once an
    occurrence. Not the host cause's (:func:`_ahead` leaves them), the one-off calls' (:func:`skip_first_calls`)."""
    loads = [i for i, c in enumerate(g.calls) if c.kind == "first" and c.name.startswith(JIT_LOAD_PREFIXES)]
    if not jit_every_step(len(loads), g.occurrences):
        return set()
    return {i for i in loads if g.calls[i].gap >= HOST_WORK_MIN_NS}


def free_gpu(g: Graph) -> Graph:
    """Not a cause's what-if but their bound: every GPU operation takes the shortest a kernel takes
    (``gpu_floor_ns``), so the step is the host's alone — what no change to the kernels' own work can
    beat (the recorded kernels' union no longer bounds it)."""
    g = _copy(g)
    for j, o in enumerate(g.ops):
        if o.dur > g.gpu_floor_ns:
            own(g.ops, j).dur = g.gpu_floor_ns
    g.kernel_busy_ns = 0.0
    return g


def scale_host(g: Graph, a: float) -> Graph:
    """The host's time times ``a``: each call's own time and the host work before and after it, the waits'
    host latency, the threads' tails, the launch floor and each operation's issue offset after its call (the
    GPU's operations keep their recorded times), a lean eager op's issuing time (:mod:`.floors`). What a profiler
    added to the host (nsys mode's plain pass, :func:`kprof_mcp.analysis.replay.gains`) comes off this way:
    ``a`` < 1."""
    g = _copy(g)
    for i in range(len(g.calls)):
        c = own(g.calls, i)
        c.gap, c.dur, c.ret, c.wake = c.gap * a, c.dur * a, c.ret * a, c.wake * a
    for j in range(len(g.ops)):
        o = own(g.ops, j)
        o.issue *= a
    g.tails = {t: v * a for t, v in g.tails.items()}
    g.launch_floor_ns *= a
    g.op_floor_ns *= a
    return g
