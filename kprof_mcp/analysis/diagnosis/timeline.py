"""Opportunities a timeline shows: launch overhead, stream overlap, wave tails, and the causes of
the GPU's idle time (sync per step, host work, launches, first calls, copies, other CUDA calls)."""

from __future__ import annotations

import math

from ..idle_sources import source_of
from .metrics import METRICS_ONLY_MAX_SHARE, MIN_SHARE, Facts, Opportunity, gain_pct


def timeline_opportunities(tl: dict, plan_kind: str, headroom: float | None = None) -> list[Opportunity]:
    """Opportunities the timeline shows, as shares of the whole plan's time (capped by the plan's
    headroom 1 − T_sol/T, T_sol the sum of its stages' speed-of-light times).

    * with an idle breakdown (every timeline recorded since issue 26): the causes of
      :func:`idle_opportunities` — sync per step, host-bound, launch overhead, one-off first calls,
      host-to-device copies, other CUDA calls — each the share of the wall time its idle time owns.
    * without one (older recordings), launch-bound (GPU busy b % of the window, kernels shorter than
      the launch interval): fusing launches or replaying them as a CUDA graph removes the idle
      time → share 1 − b.
    * concurrent plan whose streams overlap little: perfect overlap would take the longest
      stream's busy time instead of their union → share 1 − max/union.
    * partial last wave with few waves (1 ≤ waves < 4, last-wave efficiency e < 0.5): one of
      ceil(w) waves is mostly idle → share 1 − w/ceil(w) (assumes one block per SM per wave).
    """
    cap = METRICS_ONLY_MAX_SHARE if headroom is None else headroom
    out: list[Opportunity] = []

    def add(cause: str, share: float, facts: dict) -> None:
        share = min(share, cap)
        if share >= MIN_SHARE:
            out.append(Opportunity(cause, gain_pct(share), share, True, Facts(**facts)))

    idle = tl.get("idle") or {}
    if idle.get("window_ns"):
        # Shares of the wall time, each bounded by the idle time it owns (not by the stages' headroom,
        # a share of their kernel time).
        out.extend(idle_opportunities(idle))
    launch = tl.get("launch") or {}
    busy = launch.get("gpu_busy_pct")
    if launch.get("launch_bound") and busy and not idle.get("window_ns"):
        add("launch", 1.0 - busy / 100.0, {"gpu_busy_pct": busy})
    streams = tl.get("streams") or []
    if plan_kind == "concurrent" and len(streams) > 1:
        busy_max = max(s["busy_ns"] for s in streams)
        union = tl.get("gpu_busy_ns") or 0.0
        ov = min(s["overlap_pct"] for s in streams)
        if busy_max > 0 and union > busy_max * 1.1:
            add("streams", 1.0 - busy_max / union, {"stream_overlap_pct": ov})
    out.extend(_tail(tl, add))
    out.sort(key=lambda o: o.est_gain_pct, reverse=True)
    return out


def _tail(tl: dict, add) -> list[Opportunity]:
    """The partial last wave of a kernel with few waves (1 ≤ w < 4, last-wave efficiency < 0.5), a share of
    the whole timeline. Replayed (:mod:`kprof_mcp.analysis.replay.tail`): the step re-timed with that kernel's
    launches evened out, its waves from the blocks per SM its registers, shared memory and warps allow — a
    kernel off the critical path gains nothing. Without a replay (older recordings): one of ceil(w) waves
    mostly idle, ``1 − w/ceil(w)`` of the kernel's time (one block per SM per wave assumed), weighted by the
    kernel's share of the window. Adds through ``add``; returns nothing of its own."""
    rp = (tl.get("idle") or {}).get("replay") or {}
    if rp.get("recorded_ns"):
        t, share = rp.get("tail"), _replayed_shares(rp).get("tail", 0.0)
        if t:
            facts = {
                "kernel": t["kernel"],
                "last_wave_efficiency": t["last_wave"],
                "waves_per_sm": t["waves"],
            }
            add("tail", share, {**facts, "value": t["freed_ns"]})
        return []
    window = float(tl.get("window_ns") or 0.0)
    totals = {r["name"]: float(r.get("total_ns") or 0.0) for r in tl.get("kernel_summary") or []}
    for w in tl.get("waves") or []:
        waves = w.get("blocks_per_sm") or 0.0
        if 1.0 <= waves < 4.0 and w.get("last_wave_efficiency", 1.0) < 0.5 and window > 0:
            weight = min(1.0, totals.get(w["kernel"], 0.0) / window)
            add(
                "tail",
                (1.0 - waves / math.ceil(waves)) * weight,
                {"kernel": w["kernel"], "last_wave_efficiency": w["last_wave_efficiency"]},
            )
    return []


def _replayed_shares(rp: dict) -> dict[str, float]:
    """Per cause, the share of the step that replaying the trace without it removes
    (:mod:`kprof_mcp.analysis.replay`): 1 − replayed / the step, never below 0 — the step timed without a
    profiler where nsys mode's plain pass timed it (``base_ns``), else the recorded one."""
    rec = float(rp.get("base_ns") or rp.get("recorded_ns") or 0.0)
    if rec <= 0:
        return {}
    return {c: max(0.0, 1.0 - float(ns) / rec) for c, ns in (rp.get("step_ns") or {}).items() if ns}


def _round_trip(out: list[Opportunity], idle: dict, d2h: float) -> None:
    """Data copied down, worked on by the host and copied back up every step (``round_trip_host_ns``,
    :func:`~kprof_mcp.analysis.replay.transforms.round_trip_host_ns`) is host compute in the data path, not a
    snapshot: where that host work takes longer than the downloads, the copy what-if's gain (the replay
    without the copies, their waits and the work between them: the work done on the GPU) is the host's
    — a module, tensor or op left on the CPU. The copy opportunity becomes a host one (``move="round_trip"``),
    and a host opportunity of its own, smaller, goes: one fix. Where the host's own opportunity is the larger
    (host work elsewhere in the step too), both stay as they are. Changes ``out`` in place."""
    rp = idle.get("replay") or {}
    occ = max(1, int(idle.get("occurrences") or 1))
    host_ns = float(rp.get("round_trip_host_ns") or 0.0) * occ
    copy = next((o for o in out if o.cause == "copy" and o.facts.value), None)
    if copy is None or host_ns <= d2h or any(o.cause == "host" and o.share > copy.share for o in out):
        return
    out[:] = [o for o in out if o is not copy and o.cause != "host"]
    facts = {
        "idle_pct": copy.facts.idle_pct,
        "gpu_busy_pct": copy.facts.gpu_busy_pct,
        "source_line": copy.facts.source_line,
        "move": "round_trip",
        "value": host_ns / occ,
        "copy_ns": d2h / occ,
    }
    out.append(Opportunity("host", copy.est_gain_pct, copy.share, True, Facts(**facts)))


def _batch(replayed: dict[str, float], idle: dict) -> dict:
    """The launch cause's other fix, batching a run of launches of one kernel into one
    (:mod:`kprof_mcp.analysis.replay.batch`): where the replay found a run, its kernel, launches per
    run, grid and the share of the GPU each launch filled (``waves_per_sm``) go into the launch
    cause's facts, and where batching replays faster than a CUDA graph its share is the launch
    cause's (``move="batch"``). Changes ``replayed`` in place."""
    run = (idle.get("replay") or {}).get("batch")
    if not run or _serialised(run, idle):
        return {}
    facts = {
        "kernel": run["kernel"],
        "kernels": run["launches_per_run"],
        "grid_blocks": run.get("grid_blocks"),
        "waves_per_sm": run.get("fill"),
    }
    if replayed.get("batch", 0.0) > replayed.get("launch", 0.0):
        replayed["launch"] = replayed["batch"]
        facts["move"] = "batch"
    return facts


def _serialised(run: dict, idle: dict) -> bool:
    """Whether batching the replay's run frees kernel time more than launch time: its launches' kernels,
    each filling a small part of the GPU, run one after another (the replay packs them side by side,
    ``batched_ns`` against ``kernels_ns``), and the saving is theirs, not the host's gaps between them."""
    occ = max(1, int(idle.get("occurrences") or 1))
    saved = (float(run.get("kernels_ns") or 0.0) - float(run.get("batched_ns") or 0.0)) * float(
        run.get("runs_per_occurrence") or 1.0
    )
    launch = float((idle.get("parts_ns") or {}).get("launch") or 0.0) / occ
    return saved > launch


def serialised_opportunity(idle: dict) -> Opportunity | None:
    """Launches of one kernel, each filling a small part of the GPU, run one after another on one stream,
    their kernel time (not the host's launch gaps) the saving: cause ``streams`` (work serialised on one
    stream that could overlap), estimated by the replay that runs the run as one batched kernel
    (:mod:`kprof_mcp.analysis.replay.batch`: the launches' blocks side by side, as concurrent streams
    would run them where they fit the SMs together); the launch cause keeps its graph replay. A timeline
    owns no idle time for it: the GPU is busy, with most of its SMs empty."""
    run = (idle.get("replay") or {}).get("batch")
    if not run or not _serialised(run, idle):
        return None
    share = _replayed_shares(idle.get("replay") or {}).get("batch", 0.0)
    if share < MIN_SHARE:
        return None
    facts = Facts(
        move="batch",
        kernel=run["kernel"],
        kernels=run["launches_per_run"],
        grid_blocks=run.get("grid_blocks"),
        waves_per_sm=run.get("fill"),
    )
    return Opportunity("streams", gain_pct(share), share, True, facts)


def idle_opportunities(idle: dict) -> list[Opportunity]:
    """Causes from a timeline's idle breakdown (:mod:`kprof_mcp.analysis.idle`). Which causes are
    there is the breakdown's (a cause needs idle time of its own, at least ``MIN_SHARE`` of the
    window); how much each is worth is the replay's when ``idle["replay"]`` holds one
    (:mod:`kprof_mcp.analysis.replay`: the recorded run re-timed with the cause removed, gain =
    recorded step / replayed step − 1; the replayed step, never below the kernels' recorded busy
    time, bounds it). Without it (older recordings), each is a share of the window's wall time: the
    GPU idle time its host state owns (the rules below), at most ``METRICS_ONLY_MAX_SHARE``. No cause
    can claim more than the idle time it owns, so none passes the speed-of-light bound of a timeline.

    * sync: a sync (or a device-to-host copy) per step drains the GPU, and the host's work after it
      cannot overlap GPU work. Without the sync the step takes max(host, GPU) instead of their sum:
      the removable share is min(idle after syncs, GPU busy) / window.
    * host: the host's own work (outside CUDA for 100 us or more at a stretch) with the GPU waiting:
      all of that idle time, plus the idle time after syncs that overlap could not hide (beyond the
      GPU's busy time: host work that stays when the syncs go). Where it owns more idle time than the
      syncs, the replay of both removed (``host_sync``: host work that reads the GPU's values between its
      stretches loses its reads with it) when that gains more.
    * launch: idle while the host is in launch calls or issuing the next operation (< 100 us
      between calls): CUDA graphs or fusion remove it. Only with more than one launch per
      occurrence (with one, the gap is the loop around the work). Where the replay found a run of
      launches of one kernel that each fill part of the GPU, batching them into one launch is the
      other fix: the better of the two replays is the estimate (:func:`_batch`).
    * first_call: module loading, JIT, first launches inside the window: one-off, not per step.
    * copy: the host staging host-to-device copies while the GPU waits, plus copy time no kernel
      overlaps; and per-step device-to-host copies of whole tensors (1 MiB or more: a snapshot for
      logging), which the host waits for — the host's cause instead where the host's work after such a copy
      ends in an upload and takes longer than the downloads (:func:`_round_trip`).
    * other_api: other CUDA calls (allocation, frees) while the GPU waits.
    """
    window = float(idle.get("window_ns") or 0.0)
    if window <= 0:
        return []
    parts, ev = idle.get("parts_ns") or {}, idle.get("evidence") or {}
    occ = max(1, int(idle.get("occurrences") or 1))
    busy_pct = 100.0 * float(idle.get("busy_ns") or 0.0) / window
    out: list[Opportunity] = []
    replayed = _replayed_shares(idle.get("replay") or {})

    def add(cause: str, ns: float, facts: dict) -> None:
        # Every idle cause's facts: the share of the wall time it owns and the GPU's busy share. Its
        # estimate: the replay's (the step replayed without the cause) when the trace was replayed,
        # not held to METRICS_ONLY_MAX_SHARE: the replayed step is a measured what-if with its own
        # floor (the kernels' recorded busy time, the host calls that stay), the bound the cap stands
        # in for where no time was measured.
        share = min(ns / window, METRICS_ONLY_MAX_SHARE)
        if cause in replayed and share >= MIN_SHARE:
            share = replayed[cause]
        if share >= MIN_SHARE:
            facts = {
                "idle_pct": 100.0 * ns / window,
                **facts,
                "gpu_busy_pct": busy_pct,
                "source_line": source_of(idle, cause),  # the Python line (python_backtrace), else None
            }
            out.append(Opportunity(cause, gain_pct(share), share, True, Facts(**facts)))

    sync = float(parts.get("sync") or 0.0)
    add(
        "sync",
        min(sync, float(idle.get("busy_ns") or 0.0)),
        {
            "idle_pct": 100.0 * sync / window,
            "calls": ev.get("sync_calls") or [],
            "ops": ev.get("sync_ops") or [],
        },
    )
    # The idle time while the host issues the next operation is the launch cause's up to what a lean eager op
    # costs this host (recorded in the same trace: capture.op_floor); the host's own work above that is the host
    # cause's (replay.floors: the share of the issuing time above the floor).
    rp = idle.get("replay") or {}
    floor = bool(rp.get("op_floor_ns"))
    excess = min(1.0, max(0.0, float(rp.get("op_excess_share") or 0.0))) if floor else 1.0
    # Idle after syncs beyond what overlap can hide is the host's re-issuing after each wait, which stays when
    # the syncs go: its part above the floor is host work (all of it where the trace has no floor).
    host = float(parts.get("host") or 0.0) + max(0.0, sync - float(idle.get("busy_ns") or 0.0)) * excess
    short = float(parts.get("launch") or 0.0)
    spread = short * excess if floor else 0.0
    host += spread
    if "host_sync" in replayed and host > sync:
        # Where neither alone moves the step (the host's work reads the GPU's values between its stretches),
        # removing the work removes its reads: the joint replay is the host's where it owns more idle time.
        replayed["host"] = max(replayed.get("host", 0.0), replayed["host_sync"])
    add(
        "host",
        host,
        {
            "process_scope": idle.get("scope") == "process",
            "stretches": ev.get("host_stretches"),
            "stretch_median_ns": ev.get("host_stretch_median_ns"),
            **(
                {"op_floor_ns": rp.get("op_floor_ns"), "host_per_launch_ns": rp.get("host_per_launch_ns")}
                if spread > float(parts.get("host") or 0.0)
                else {}
            ),
        },
    )
    # One launch per occurrence: the gap between occurrences is the loop around them, not the work's.
    launch = short - spread if float(ev.get("launches") or 0) > occ else 0.0
    batch = _batch(replayed, idle)  # before add(): it may raise the launch cause's replayed share
    add("launch", launch, {"launches_per_occurrence": float(ev.get("launches") or 0) / occ, **batch})
    first = float(parts.get("first_call") or 0.0)
    add("first_call", first, {"calls": ev.get("first_call_calls") or []})
    copy = float(parts.get("copy_h2d") or 0.0) + float(ev.get("h2d_exposed_ns") or 0.0)
    # Per-step device-to-host copies of whole tensors (the replay measured them): the host waits for them
    # as for a sync, but the copy itself, not the drained queue, is the cost.
    d2h = float(rp.get("d2h_bulk_ns") or 0.0) * occ
    off = {"move": "offload", "copies": rp.get("offload_copies"), "copy_ns": rp.get("offload_ns")}
    facts = off if rp.get("offload_copies") else {"copies": ev.get("h2d_copies", 0)}
    add("copy", copy + d2h, {**facts, "value": d2h / occ if d2h else None})
    _round_trip(out, idle, d2h)
    other = float(parts.get("other_api") or 0.0)
    add("cuda_api", other, {"calls": ev.get("other_calls") or []})
    if (serial := serialised_opportunity(idle)) is not None:
        out.append(serial)
    out.sort(key=lambda o: o.est_gain_pct, reverse=True)
    return out
