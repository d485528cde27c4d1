"""A profile against its baseline, as facts, computed once (:func:`against`, called by
``engine.run.render_profile``) and worded by ``render/contract.py``: the whole profile's speed-up with
its bootstrap CI from both profiles' raw samples, and each stage's :class:`~.noise.Judgement` against
this GPU's noise floor (or, with none measured, the two profiles' own spread)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..models import ProfileResult, Timing
from .compare import Ratio, compare
from .noise import Judgement, judge


@dataclass(frozen=True)
class StageVerdict:
    stage: str
    prev_ns: float
    cur_ns: float
    judgement: Judgement
    floor: dict[str, Any] | None  # the floor record that applied (from, bound, class), when one did


@dataclass(frozen=True)
class VsBaseline:
    whole: Ratio | None  # one stage's or the whole plan's speed-up and CI; None without samples to compare
    stages: tuple[StageVerdict, ...]  # the stages both profiles have, in the current profile's order


def samples_ratio(a: Timing | None, b: Timing | None) -> Ratio | None:
    """The bootstrap comparison of two Timings' raw samples (previous ``a``, current ``b``), when both
    kept them: the same timing method, ≥ 4 samples a side; else None."""
    if a is None or b is None or a.method != b.method or len(a.samples_ns) < 4 or len(b.samples_ns) < 4:
        return None
    return compare("previous", [a.samples_ns], "current", [b.samples_ns], resamples=1000)


def against(result: ProfileResult, baseline: ProfileResult) -> VsBaseline:
    """``result`` against ``baseline``: the speed-up's CI (one stage, or the whole-plan time) and a
    verdict per stage from both profiles' samples and the floor ``result`` carries."""

    def timing(r: ProfileResult) -> Timing | None:
        return (
            r.plan_total if r.plan_total is not None else (r.stages[0].timing if len(r.stages) == 1 else None)
        )

    whole_pair = (timing(baseline), timing(result))
    whole = samples_ratio(*whole_pair)
    floors = result.noise_floor.get("stages", {}) if result.noise_floor else {}
    prev = {s.name: s for s in baseline.stages}
    stages = []
    for s in result.stages:
        if s.name not in prev:
            continue
        a, b = prev[s.name].timing, s.timing
        same = a is whole_pair[0] and b is whole_pair[1]  # one stage: the whole profile's samples
        ratio = whole if same else samples_ratio(a, b)
        floor = floors.get(s.name)
        spread = 100.0 * max(a.rel_iqr, b.rel_iqr)  # stands in for a floor not measured on this GPU
        j = judge(
            a.median_ns,
            b.median_ns,
            None if ratio is None else (ratio.ci_low, ratio.ci_high),
            (floor or {}).get("pct"),
            spread,
        )
        stages.append(StageVerdict(s.name, a.median_ns, b.median_ns, j, floor))
    return VsBaseline(whole, tuple(stages))
