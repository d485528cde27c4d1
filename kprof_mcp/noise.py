"""Measuring and keeping the noise floor of this machine's GPUs (issue 27; the statistics are in
:mod:`kprof_mcp.analysis.noise`): ``kprof noise`` and the ``measure_noise`` tool profile kernels in
event mode round after round, alternating, and store each one's between-profile spread in kprof's
cache, per GPU model; every later profile on that GPU carries the floor that applies to its time
scale, and the vs-Baseline verdict uses it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, Callable

from .analysis.noise import floor_for, spread
from .locks import cache_dir

DEFAULT_CASES = [("matmul", "v3", {}), ("softmax", "v2", {}), ("vector_add", "v1", {})]


def _path(device: str) -> Path:
    slug = "".join(c if c.isalnum() else "_" for c in device).strip("_") or "device"
    return cache_dir() / "noise" / f"{slug}.json"


def load(device: str) -> list[dict[str, Any]]:
    try:
        d = json.loads(_path(device).read_text())
    except (OSError, ValueError):
        return []
    return [e for e in d.get("series", []) if isinstance(e, dict)] if isinstance(d, dict) else []


def store(device: str, series: list[dict[str, Any]]) -> Path:
    """Keep ``series``, replacing earlier ones of the same kernel, version, parameters and clock."""
    key = lambda e: (e.get("kernel"), e.get("version"), json.dumps(e.get("params"), sort_keys=True),  # noqa: E731
                     e.get("clock"))
    new = {key(e) for e in series}
    kept = [e for e in load(device) if key(e) not in new] + series
    p = _path(device)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps({"device": device, "series": kept}, indent=1))
    tmp.replace(p)
    return p


def floors(device: str, result) -> dict[str, Any]:
    """The floor for a profile's result (``ProfileResult.noise_floor``): per stage and for the
    whole, from this GPU model's stored series; {} when none was measured."""
    stored = load(device)
    entries = [e for e in stored if e.get("clock") == ("locked" if result.device.clocks_locked else "free")] or stored
    if not entries:
        return {}
    stages = {s.name: f for s in result.stages if (f := floor_for(entries, s.timing.median_ns))}
    whole = floor_for(entries, result.total_time_ns())
    if not stages and not whole:
        return {}
    return {"stages": stages, "total": whole, "source": f"kprof noise on this {device} ({len(entries)} A/A series)"}


def measure(engine, cases: list[tuple[str, str, dict]] | None = None, rounds: int = 8,
            clock_control: str = "base", on_progress: Callable[[float, str], None] | None = None) -> dict[str, Any]:
    """Profile each case in event mode ``rounds`` times, alternating between cases (A/A for each,
    with the others in between as an application would), and store the series."""
    cases = cases or DEFAULT_CASES
    times: dict[int, list[float]] = {i: [] for i in range(len(cases))}
    device, locked = None, None
    for r in range(rounds):
        for i, (kernel, version, params) in enumerate(cases):
            if on_progress:
                on_progress((r * len(cases) + i) / (rounds * len(cases)), f"round {r + 1}: {kernel} {version}")
            o = engine.profile(kernel, version, params, "event", clock_control=clock_control)
            times[i].append(o.result.total_time_ns())
            device = o.result.device.name
            locked = o.result.device.clocks_locked
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    series = [{"kernel": k, "version": v, "params": p, "clock": "locked" if locked else "free", "measured_at": now,
               **spread(times[i]), "times_ns": times[i]} for i, (k, v, p) in enumerate(cases)]
    path = store(device or "cpu", series)
    return {"device": device, "series": series, "stored": str(path)}
