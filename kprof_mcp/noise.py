"""Measuring and keeping the noise floor of this machine's GPUs (issue 27; the statistics are in
:mod:`kprof_mcp.analysis.noise`): ``kprof noise`` and the ``measure_noise`` tool profile kernels in
event mode round after round, alternating, and store each one's between-profile spread in kprof's
cache, per GPU model; every later profile on that GPU carries the floor that applies to its time
scale, and the vs-Baseline verdict uses it."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
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
    key = lambda e: (
        e.get("kernel"),
        e.get("version"),
        json.dumps(e.get("params"), sort_keys=True),  # noqa: E731
        e.get("clock"),
    )
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
    entries = [
        e for e in stored if e.get("clock") == ("locked" if result.device.clocks_locked else "free")
    ] or stored
    if not entries:
        return {}
    stages = {
        s.name: f for s in result.stages if (f := floor_for(entries, s.timing.median_ns, stage_bound(s)))
    }
    longest = max(result.stages, key=lambda s: s.timing.median_ns, default=None)
    whole = floor_for(entries, result.total_time_ns(), stage_bound(longest) if longest else None)
    if not stages and not whole:
        return {}
    return {
        "stages": stages,
        "total": whole,
        "source": f"kprof noise on this {device} ({len(entries)} A/A series)",
    }


def stage_bound(s) -> str | None:
    """A stage's class for the floor: compute- or memory-bound by its FLOP/byte model."""
    return s.roofline_region


MIN_ROUNDS, MAX_ROUNDS, MAX_CASES = 2, 50, 8


class NoiseError(ValueError):
    """A noise measurement that cannot run as asked (the message says what is valid)."""


@dataclass(frozen=True)
class NoiseSpec:
    """A checked noise measurement (:func:`check`): what ``measure_noise`` and ``kprof noise`` run."""

    cases: tuple[tuple[str, str, dict], ...]
    rounds: int
    clock_control: str

    @property
    def label(self) -> str:
        return "noise floor: " + ", ".join(f"{k} {v}" for k, v, _ in self.cases) + f" x {self.rounds}"

    def run(
        self, engine, on_progress: Callable[[float, str], None] | None = None, control=None
    ) -> NoiseOutcome:
        """Run this measurement (:func:`run`): the method every spec has, which the engine's
        ``execute`` calls."""
        return run(engine, self, on_progress, control)


@dataclass
class NoiseOutcome:
    """What a noise measurement produced: the device, one A/A series per case, where it is stored."""

    device: str | None
    series: list[dict[str, Any]]
    stored: str
    rounds: int


def check(engine, cases: list[tuple[str, str, dict]] | None, rounds: int, clock_control: str) -> NoiseSpec:
    """Validate a noise measurement before anything runs: the rounds, the clock control, and each
    case as a profile (the kernel, version and parameters exist and are valid)."""
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not MIN_ROUNDS <= rounds <= MAX_ROUNDS:
        raise NoiseError(f"rounds={rounds!r}: {MIN_ROUNDS} to {MAX_ROUNDS} profiles of each case")
    if clock_control not in ("base", "none"):
        raise NoiseError(
            f"clock_control={clock_control!r}: 'base' (locked, as profiles are by default) or 'none'"
        )
    cases = list(cases or DEFAULT_CASES)
    if len(cases) > MAX_CASES:
        raise NoiseError(f"{len(cases)} cases: at most {MAX_CASES}")
    checked = []
    for kernel, version, params in cases:
        spec = engine.check_profile(kernel, version, params, "event", clock_control=clock_control)
        checked.append((kernel, spec.req.version, dict(params or {})))
    return NoiseSpec(tuple(checked), rounds, clock_control)


def run(
    engine, spec: NoiseSpec, on_progress: Callable[[float, str], None] | None = None, control=None
) -> NoiseOutcome:
    """Run a checked measurement (the engine's ``execute`` calls this through :meth:`NoiseSpec.run`)."""
    out = measure(engine, list(spec.cases), spec.rounds, spec.clock_control, on_progress, control)
    return NoiseOutcome(device=out["device"], series=out["series"], stored=out["stored"], rounds=spec.rounds)


def measure(
    engine,
    cases: list[tuple[str, str, dict]] | None = None,
    rounds: int = 8,
    clock_control: str = "base",
    on_progress: Callable[[float, str], None] | None = None,
    control=None,
) -> dict[str, Any]:
    """Profile each case in event mode ``rounds`` times, alternating between cases (A/A for each,
    with the others in between as an application would), and store the series. ``control``: the
    caller's run control (its GPU and cancellation), passed to every profile."""
    cases = cases or DEFAULT_CASES
    times: dict[int, list[float]] = {i: [] for i in range(len(cases))}
    device, locked = None, None
    bounds: dict[int, str | None] = {}
    for r in range(rounds):
        for i, (kernel, version, params) in enumerate(cases):
            if on_progress:
                on_progress(
                    (r * len(cases) + i) / (rounds * len(cases)), f"round {r + 1}: {kernel} {version}"
                )
            if control is not None:
                control.check()
            o = engine.profile(kernel, version, params, "event", clock_control=clock_control, control=control)
            times[i].append(o.result.total_time_ns())
            longest = max(o.result.stages, key=lambda s: s.timing.median_ns, default=None)
            bounds[i] = stage_bound(longest) if longest else None
            device = o.result.device.name
            locked = o.result.device.clocks_locked
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    series = [
        {
            "kernel": k,
            "version": v,
            "params": p,
            "clock": "locked" if locked else "free",
            "measured_at": now,
            "bound": bounds.get(i),
            **spread(times[i]),
            "times_ns": times[i],
        }
        for i, (k, v, p) in enumerate(cases)
    ]
    path = store(device or "cpu", series)
    return {"device": device, "series": series, "stored": str(path)}
