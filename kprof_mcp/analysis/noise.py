"""The noise floor (issue 27): how much one profile's time moves against another's of the same code
on the same GPU, measured by A/A profiles, and the baseline verdict built on it.

Each profile's own spread (IQR, CI of its median) says how well that run measured itself; between
two runs, the GPU's state moves times further (matmul v3 on an H100 at a locked clock, timed over
1 s windows: 1.1 % between profiles). What moves depends on what bounds the kernel: Nsight Compute
reads that a tensor-core GEMM runs 3–6 % below a locked SM clock, at a clock that changes 2–3 % from
launch to launch while its cycle count stays within ~1 % (docs/evidence/h100-thermal), whereas
memory-bound kernels move 0.05–0.2 %. So a floor is kept per class (compute- or memory-bound, from the FLOP/byte
model) as well as per time scale. A change smaller than the floor cannot be called a change by
profiling twice; ``compare_versions`` (interleaved in one process) measures such differences.

Pure: A/A times in, a floor out; two profiles, a CI and a floor in, a verdict out (worded in render/noise.py).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace
from typing import Any


def spread(times_ns: list[float]) -> dict[str, Any]:
    """One A/A series (the same stage profiled repeatedly): its median, (max − min) ÷ median and
    relative standard deviation, in %."""
    med = statistics.median(times_ns)
    return {
        "median_ns": med,
        "profiles": len(times_ns),
        "range_pct": 100.0 * (max(times_ns) - min(times_ns)) / med if med else None,
        "rel_sd_pct": 100.0 * statistics.stdev(times_ns) / med if med and len(times_ns) > 1 else None,
    }


def floor_for(
    entries: list[dict[str, Any]], time_ns: float, bound: str | None = None
) -> dict[str, Any] | None:
    """The floor that applies to a stage of ``time_ns``: the largest A/A range among the measured
    series within a factor of 10 of that time scale (times that short or long move for other
    reasons), taken from the series of the stage's own ``bound`` class when any was measured (a
    memory-bound stage does not inherit a GEMM's clock swings), else from all of them (and it says
    so); none when no series is of that scale. ``entries``: the device's stored series (``spread``
    plus kernel, version, bound)."""
    near = (
        [
            e
            for e in entries
            if e.get("median_ns")
            and e.get("range_pct") is not None
            and abs(math.log10(e["median_ns"] / time_ns)) <= 1.0
        ]
        if time_ns > 0
        else []
    )
    if not near:
        return None
    same = [e for e in near if bound and e.get("bound") == bound]
    pool = same or near
    worst = max(pool, key=lambda e: e["range_pct"])
    return {
        "pct": worst["range_pct"],
        "from": f"{worst.get('kernel')} {worst.get('version')}",
        "profiles": worst.get("profiles"),
        "median_ns": worst["median_ns"],
        "measured_at": worst.get("measured_at"),
        "series": len(pool),
        "bound": bound,
        "class": ("same" if same else "any") if bound else "unknown",
    }


@dataclass(frozen=True)
class Judgement:
    """A stage timed ``prev_ns`` before and ``cur_ns`` now, judged (:func:`judge`); worded by
    :func:`kprof_mcp.render.noise.judgement_words`."""

    verdict: (
        str  # 'faster', 'slower', 'no significant change', 'unknown' (nothing to judge by), 'n/a' (no time)
    )
    change_pct: float  # 100 × (prev ÷ cur − 1): > 0 faster
    ci: tuple[float, float] | None  # the 95 % CI of the speed-up prev ÷ cur from both profiles' samples
    floor_pct: float | None  # the noise floor measured on this GPU
    spread_pct: float | None  # the larger of the two profiles' own IQR/median, in %

    @property
    def guard_pct(self) -> float | None:
        """What a change must exceed: the measured floor, else the profiles' own spread."""
        return self.floor_pct if self.floor_pct is not None else self.spread_pct

    @property
    def inside_guard(self) -> bool:
        return self.guard_pct is not None and abs(self.change_pct) <= self.guard_pct


def judge(
    prev_ns: float,
    cur_ns: float,
    ci: tuple[float, float] | None,
    floor_pct: float | None,
    spread_pct: float | None = None,
) -> Judgement:
    """A stage timed ``prev_ns`` before and ``cur_ns`` now. ``ci``: the 95 % CI of the speed-up
    prev/cur from both profiles' samples (None: not computable); ``floor_pct``: the measured noise
    floor (None: none measured); ``spread_pct``: the larger of the two profiles' own IQR/median, in %,
    which stands in for the floor when none was measured.

    Faster (or slower) only when the change is larger than the floor and the CI excludes no change;
    otherwise "no significant change". The CI alone never decides: runs within one profile are
    autocorrelated, so it is narrower than the spread between profiles (vector_add on an H100:
    70.27 → 70.34 µs, CI 0.999–1.000, from two profiles of the same code)."""
    if prev_ns <= 0 or cur_ns <= 0:
        return Judgement("n/a", 0.0, ci, floor_pct, spread_pct)
    j = Judgement("", 100.0 * (prev_ns / cur_ns - 1.0), ci, floor_pct, spread_pct)
    if floor_pct is None and ci is None:
        return replace(j, verdict="unknown")
    significant = not j.inside_guard and not (ci is not None and ci[0] <= 1.0 <= ci[1])
    if not significant:
        return replace(j, verdict="no significant change")
    return replace(j, verdict="faster" if j.change_pct > 0 else "slower")
