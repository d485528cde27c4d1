"""The diagnosis and the assessment, worded: the same shapes :mod:`kprof_mcp.analysis` computes,
with each opportunity's name, trigger and hint, the root cause's sentences, the unhealthy metrics as
``metric=value`` and the notes as text (:mod:`.words`). What the renderers, the engine and the
faces read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...analysis import assessment as _a
from ...analysis import diagnosis as dx
from ...models import ProfileResult, ResultWarning
from .words import NOTES, metric_text, root_cause_text, words


@dataclass(frozen=True)
class Opportunity:
    name: str
    est_gain_pct: float
    trigger: str  # "metric=value"
    hint: str = ""
    cause: str = ""  # the diagnosis' cause key (kprof_mcp.analysis.diagnosis.Opportunity)
    share: float = 0.0  # the share of the stage's time it would remove (gain = 1/(1 − share) − 1)
    specific: bool = True  # a cause the counters pin down (False: generic advice, credited only what is left)


@dataclass(frozen=True)
class Diagnosis:
    bottleneck: str
    locality_issue: bool
    unhealthy: tuple[str, ...]
    opportunities: tuple[Opportunity, ...]
    compute_source: str  # "tc_pct", "compute_pct" or "none"
    root_cause: str
    notes: tuple[str, ...] = field(default_factory=tuple)


def word(o: dx.Opportunity) -> Opportunity:
    name, trigger, hint = words(o)
    return Opportunity(name, o.est_gain_pct, trigger, hint, o.cause, o.share, o.specific)


def word_diagnosis(d: dx.Diagnosis) -> Diagnosis:
    return Diagnosis(
        bottleneck=d.bottleneck,
        locality_issue=d.locality_issue,
        unhealthy=tuple(metric_text(k, v) for k, v in d.unhealthy),
        opportunities=tuple(word(o) for o in d.opportunities),
        compute_source=d.compute_source,
        root_cause=root_cause_text(d.root_cause),
        notes=(NOTES[d.compute_source],) if d.compute_source in NOTES else (),
    )


def diagnose(m: dx.Metrics) -> Diagnosis:
    """:func:`kprof_mcp.analysis.diagnosis.diagnose`, worded."""
    return word_diagnosis(dx.diagnose(m))


def opportunities(m: dx.Metrics, bottleneck: str | None = None) -> list[Opportunity]:
    return [word(o) for o in dx.opportunities(m, bottleneck)]


def rule_opportunities(rules: list[dict], headroom: float | None = None) -> list[Opportunity]:
    return [word(o) for o in dx.rule_opportunities(rules, headroom)]


def timeline_opportunities(tl: dict, plan_kind: str, headroom: float | None = None) -> list[Opportunity]:
    return [word(o) for o in dx.timeline_opportunities(tl, plan_kind, headroom)]


def idle_opportunities(idle: dict) -> list[Opportunity]:
    return [word(o) for o in dx.idle_opportunities(idle)]


def accounting_causes(m: dx.Metrics, bottleneck: str) -> list[tuple[str, float, str, str, str]]:
    """(name, share, trigger, hint, cause) of each catalogue cause the accounting proves."""
    out = []
    for cause, share, facts in dx.accounting_causes(m, bottleneck):
        name, trigger, hint = words(dx.Opportunity(cause, 0.0, share, True, dx.Facts(**facts)))
        out.append((name, share, trigger, hint, cause))
    return out


def unhealthy_metrics(m: dx.Metrics) -> list[str]:
    """``metric=value`` for each measured metric outside its healthy range."""
    return [metric_text(k, v) for k, v in dx.unhealthy_metrics(m)]


def root_cause(m: dx.Metrics, bottleneck: str) -> str:
    """At most two sentences naming the limiting resource and the strongest symptom."""
    return root_cause_text(dx.root_cause(m, bottleneck))


# The assessment, worded: each container keeps the analysis' fields and methods; the opportunities,
# the key issue, the root cause and the stages' diagnoses are the worded ones.
@dataclass(frozen=True)
class KeyIssue:
    """:class:`kprof_mcp.analysis.assessment.KeyIssue` with ``trigger``: the top opportunity's
    trigger (``trigger``) or the bottleneck's own metric (``at_roof``)."""

    kind: str
    trigger: str | None = None
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RankedOpportunity:
    name: str
    est_gain_pct: float
    trigger: str
    stage: str | None  # None: a whole-plan finding of the timeline
    stage_gain_pct: float
    source: str  # "kprof" (our model), "ncu" (Nsight Compute's rule estimate) or "timeline"
    cause: str = ""  # the diagnosis' cause key (spills, few_blocks, tail, over_fetch, launch, ...)


@dataclass(frozen=True)
class RootCause:
    kind: str
    text: str  # the diagnosis' own sentences ("" for kind none)
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StageAssessment(_a.StageAssessment):
    diagnosis: Diagnosis | None  # type: ignore[assignment]
    key_issue: KeyIssue  # type: ignore[assignment]


@dataclass(frozen=True)
class Assessment(_a.Assessment):
    stages: tuple[StageAssessment, ...]  # type: ignore[assignment]
    main: StageAssessment  # type: ignore[assignment]
    root_cause: RootCause  # type: ignore[assignment]
    opportunities: tuple[RankedOpportunity, ...]  # type: ignore[assignment]


def _key_issue(k: _a.KeyIssue) -> KeyIssue:
    if k.kind == "trigger":
        return KeyIssue(k.kind, words(k.top)[1] if k.top is not None else None, k.values)
    if k.kind == "at_roof":
        return KeyIssue(k.kind, f"{k.values['metric']}={k.values['value']:.1f}")
    return KeyIssue(k.kind, None, k.values)


def _stage(sa: _a.StageAssessment) -> StageAssessment:
    d = word_diagnosis(sa.diagnosis) if sa.diagnosis is not None else None
    return StageAssessment(sa.stage, sa.metrics, d, _key_issue(sa.key_issue), sa.share, sa.at_clock)


def _ranked(o: _a.RankedOpportunity) -> RankedOpportunity:
    name, trigger, _ = words(o.opportunity)
    return RankedOpportunity(name, o.est_gain_pct, trigger, o.stage, o.stage_gain_pct, o.source, o.cause)


def word_assessment(a: _a.Assessment) -> Assessment:
    stages = {id(sa): _stage(sa) for sa in a.stages}
    rc = a.root_cause
    return Assessment(
        stages=tuple(stages[id(sa)] for sa in a.stages),
        main=stages[id(a.main)],
        bottleneck=a.bottleneck,
        locality_issue=a.locality_issue,
        root_cause=RootCause(rc.kind, root_cause_text(rc.facts) if rc.facts is not None else "", rc.values),
        opportunities=tuple(_ranked(o) for o in a.opportunities),
        warnings=a.warnings + tuple(over_peak_warning(o) for o in a.over_peak),
        total_time_ns=a.total_time_ns,
        flops=a.flops,
        bytes_model=a.bytes_model,
        over_peak=a.over_peak,
        occupancy=a.occupancy,
    )


def over_peak_warning(o: _a.OverPeak) -> ResultWarning:
    """A stage timed below its speed-of-light time, said as a ``matching`` warning."""
    over = []
    if o.bytes_per_s is not None:
        over.append(
            f"{o.bytes_per_s / 1e9:.0f} GB/s, over the peak bandwidth ({o.peak_bytes_per_s / 1e9:.0f} GB/s)"
        )
    if o.flops_per_s is not None:
        over.append(
            f"{o.flops_per_s / 1e12:.1f} TFLOP/s, over the peak at the clock it ran "
            f"({o.peak_flops_per_s / 1e12:.1f} TFLOP/s)"
        )
    return ResultWarning(
        kind="matching",
        stage=o.stage,
        message=(
            f"stage {o.stage}: its model over its measured time gives {' and '.join(over)}, which no kernel "
            "reaches: it was timed below its speed-of-light time. Either the time covers less work than the model "
            "(a range timed by only some of its kernels, work skipped, a result cached between runs, work on a "
            "stream outside the timed window) or the model overstates the work. Check the stage's kernels and "
            "its FLOP/byte model; the roofline figures of this stage are not to be trusted."
        ),
    )


def assess(result: ProfileResult) -> Assessment:
    """:func:`kprof_mcp.analysis.assessment.assess`, worded."""
    return word_assessment(_a.assess(result))


def assess_stage(*args: Any, **kwargs: Any) -> StageAssessment:
    """:func:`kprof_mcp.analysis.assessment.assess_stage`, worded."""
    return _stage(_a.assess_stage(*args, **kwargs))


__all__ = [
    "Assessment",
    "Diagnosis",
    "KeyIssue",
    "Opportunity",
    "RankedOpportunity",
    "RootCause",
    "StageAssessment",
    "accounting_causes",
    "assess",
    "assess_stage",
    "diagnose",
    "idle_opportunities",
    "opportunities",
    "root_cause",
    "rule_opportunities",
    "timeline_opportunities",
    "unhealthy_metrics",
    "word",
    "word_assessment",
    "word_diagnosis",
]
