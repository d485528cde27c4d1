"""Opportunities a timeline shows: launch overhead, stream overlap, wave tails, and the causes of
the GPU's idle time (sync per step, host work, launches, first calls, copies, other CUDA calls)."""

from __future__ import annotations

import math

from .metrics import METRICS_ONLY_MAX_SHARE, MIN_SHARE, Opportunity, _fmt, gain_pct


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

    def add(name: str, share: float, trigger: str, hint: str, cause: str) -> None:
        share = min(share, cap)
        if share >= MIN_SHARE:
            out.append(Opportunity(name, gain_pct(share), trigger, hint, cause, share, True))

    idle = tl.get("idle") or {}
    if idle.get("window_ns"):
        # Shares of the wall time, each bounded by the idle time it owns (not by the stages' headroom,
        # a share of their kernel time).
        out.extend(idle_opportunities(idle))
    launch = tl.get("launch") or {}
    busy = launch.get("gpu_busy_pct")
    if launch.get("launch_bound") and busy and not idle.get("window_ns"):
        add(
            "Cut launch overhead: fuse the tiny kernels, or capture the plan in a CUDA graph",
            1.0 - busy / 100.0,
            f"gpu_busy_pct={_fmt(busy)}",
            "the GPU waits for the host between kernels",
            "launch",
        )
    streams = tl.get("streams") or []
    if plan_kind == "concurrent" and len(streams) > 1:
        busy_max = max(s["busy_ns"] for s in streams)
        union = tl.get("gpu_busy_ns") or 0.0
        ov = min(s["overlap_pct"] for s in streams)
        if busy_max > 0 and union > busy_max * 1.1:
            add(
                "Make the streams overlap (fewer blocks per kernel, no implicit syncs between streams, stream "
                "priorities)",
                1.0 - busy_max / union,
                f"stream_overlap_pct={_fmt(ov)}",
                "concurrent stages run mostly one at a time",
                "streams",
            )
    for w in tl.get("waves") or []:
        waves = w.get("blocks_per_sm") or 0.0
        if 1.0 <= waves < 4.0 and w.get("last_wave_efficiency", 1.0) < 0.5:
            add(
                f"Even out the last wave of {w['kernel']} (grid a multiple of the SM count, persistent kernel)",
                1.0 - waves / math.ceil(waves),
                f"last_wave_efficiency={w['last_wave_efficiency']:.2f}",
                "wave quantization",
                "tail",
            )
    out.sort(key=lambda o: o.est_gain_pct, reverse=True)
    return out


def _calls(ev: dict, key: str, n: int = 2) -> str:
    rows = ev.get(key) or []
    return ", ".join(f"{r['call']} x{r['count']}" for r in rows[:n])


def idle_opportunities(idle: dict) -> list[Opportunity]:
    """Causes from a timeline's idle breakdown (:mod:`kprof_mcp.analysis.idle`), each a share of
    the window's wall time: the GPU idle time its host state owns. No cause can claim more than
    the idle time it owns, so none passes the speed-of-light bound of a timeline (a GPU never idle).

    * sync: a sync (or a device-to-host copy) per step drains the GPU, and the host's work after it
      cannot overlap GPU work. Without the sync the step takes max(host, GPU) instead of their sum:
      the removable share is min(idle after syncs, GPU busy) / window.
    * host: the host's own work (outside CUDA for 100 us or more at a stretch) with the GPU waiting:
      all of that idle time, plus the idle time after syncs that overlap could not hide (beyond the
      GPU's busy time: host work that stays when the syncs go).
    * launch: idle while the host is in launch calls or issuing the next operation (< 100 us
      between calls): CUDA graphs or fusion remove it. Only with more than one launch per
      occurrence (with one, the gap is the loop around the work).
    * first_call: module loading, JIT, first launches inside the window: one-off, not per step.
    * copy_h2d: the host staging host-to-device copies while the GPU waits, plus copy time no kernel
      overlaps.
    * other_api: other CUDA calls (allocation, frees) while the GPU waits.
    """
    window = float(idle.get("window_ns") or 0.0)
    if window <= 0:
        return []
    parts, ev = idle.get("parts_ns") or {}, idle.get("evidence") or {}
    occ = max(1, int(idle.get("occurrences") or 1))
    busy_pct = 100.0 * float(idle.get("busy_ns") or 0.0) / window
    out: list[Opportunity] = []

    def add(name: str, ns: float, trigger: str, hint: str, cause: str) -> None:
        share = min(ns / window, METRICS_ONLY_MAX_SHARE)
        if share >= MIN_SHARE:
            out.append(
                Opportunity(
                    name,
                    gain_pct(share),
                    f"{trigger}; gpu_busy_pct={_fmt(busy_pct)}",
                    hint,
                    cause,
                    share,
                    True,
                )
            )

    def per(ns: float) -> str:  # µs per occurrence: in the report's "Where the wall time went" table
        return f"{_fmt(100.0 * ns / window)}% of the wall time"

    sync = float(parts.get("sync") or 0.0)
    add(
        "Stop synchronising every step: keep per-step values on the GPU (losses and metrics as tensors, read "
        "with .item()/.cpu() every N steps or once at the end), so the host's work overlaps the GPU's",
        min(sync, float(idle.get("busy_ns") or 0.0)),
        f"gpu_idle_after_sync={per(sync)}, after {_calls(ev, 'sync_calls')}"
        + (
            " (made by " + ", ".join(f"{r['op']} x{r['count']}" for r in ev["sync_ops"][:2]) + ")"
            if ev.get("sync_ops")
            else ""
        ),
        "the GPU drains at each sync and waits while the host works",
        "sync",
    )
    # Idle after syncs beyond what overlap can hide is host work that stays when the syncs go.
    host = float(parts.get("host") or 0.0) + max(0.0, sync - float(idle.get("busy_ns") or 0.0))
    med = ev.get("host_stretch_median_ns")
    add(
        "Most of this run is the host's own time (start-up, imports, test collection, its Python): the GPU's "
        "kernels are not what limits it. Mark the steps to measure with kprof.range (or profile a loop of them) "
        "to see their own time"
        if idle.get("scope") == "process"
        else "Take the host's work off the GPU's critical path: build the data on the GPU, or in DataLoader workers "
        "(num_workers, pin_memory) that run ahead of the step; move per-step Python/numpy work out of the loop",
        host,
        f"gpu_idle_in_host_work={per(host)}"
        + (f", {ev.get('host_stretches')} host stretches" if med else ""),
        "the GPU waits for a host that has not issued the work yet",
        "host",
    )
    # One launch per occurrence: the gap between occurrences is the loop around them, not the work's.
    launch = float(parts.get("launch") or 0.0) if float(ev.get("launches") or 0) > occ else 0.0
    add(
        "Cut launch overhead: capture the step as a CUDA graph (torch.cuda.CUDAGraph, torch.compile "
        "mode='reduce-overhead') or fuse the small kernels",
        launch,
        f"gpu_idle_in_launches={per(launch)}, {_fmt(float(ev.get('launches') or 0) / occ)} launches per occurrence",
        "each kernel takes about as long as the host needs to issue the next",
        "launch",
    )
    first = float(parts.get("first_call") or 0.0)
    add(
        "Keep one-off costs out of the measured steps: warm up first (module loading, Triton JIT, autotuning), "
        "or cache compiled kernels",
        first,
        f"gpu_idle_in_first_calls={per(first)}, {_calls(ev, 'first_call_calls')}",
        "lazy module loads and first launches inside the window",
        "first_call",
    )
    copy = float(parts.get("copy_h2d") or 0.0) + float(ev.get("h2d_exposed_ns") or 0.0)
    add(
        "Copy host-to-device from pinned memory with non_blocking=True, ahead of use on a side stream",
        copy,
        f"h2d_copy_time_not_overlapped={per(copy)}, {ev.get('h2d_copies', 0)} copies",
        "host-to-device copies on the critical path",
        "copy",
    )
    other = float(parts.get("other_api") or 0.0)
    add(
        f"Take these CUDA calls out of the loop ({_calls(ev, 'other_calls', 3)}): reuse buffers instead of "
        "allocating, no per-step device queries",
        other,
        f"gpu_idle_in_other_cuda_calls={per(other)}",
        "CUDA calls other than launches and copies on the critical path",
        "cuda_api",
    )
    out.sort(key=lambda o: o.est_gain_pct, reverse=True)
    return out
