"""Nsight Compute's rule results as opportunities: which are ranked, which are not and why."""

from __future__ import annotations

from .metrics import METRICS_ONLY_MAX_SHARE, MIN_SHARE, Facts, Opportunity, gain_pct

# ncu rules whose cause kprof models itself: kprof's estimate stands, ncu's stays in the report.
_RULES_WE_MODEL = {
    "tail": "tail",
    "occupancy": "occupancy",
    "waves": "few_blocks",
    "small grid": "few_blocks",
}


# ncu rules whose estimate is not a change to the kernel: shown in the report, never ranked.
# MemoryL2Compression ("Low Compression Rate") estimates what L2 compression of *compressible
# allocations* would save; whether data compresses depends on its values (zeros, repeats), and
# marking memory compressible is the allocator's business (cuMemCreate), not the kernel's. On the
# recorded H100 profiles it fired on vector_add, softmax and matmul with random data at 0 %
# success and estimates up to 95 %, which would have out-ranked every real cause.
# The value is the reason's key (worded by kprof_mcp.render.diagnosis).
_RULES_NOT_ACTIONABLE = {"MemoryL2Compression": "data_dependent"}


def rule_not_ranked(rule: dict) -> str | None:
    """Why an ncu rule's estimate is not ranked among the opportunities, as a key: ``modelled`` (kprof
    models its cause, :func:`rule_cause`) or the not-actionable rule's reason (None: it may be)."""
    if rule.get("rule") in _RULES_NOT_ACTIONABLE:
        return _RULES_NOT_ACTIONABLE[rule["rule"]]
    if rule_cause(rule) is not None:
        return "modelled"
    return None


def rule_cause(rule: dict) -> str | None:
    """The kprof cause an ncu rule is about, when kprof models it (tail effect, occupancy)."""
    text = f"{rule.get('rule') or ''} {rule.get('title') or ''}".lower()
    return next((cause for word, cause in _RULES_WE_MODEL.items() if word in text), None)


def rule_opportunities(rules: list[dict], headroom: float | None = None) -> list[Opportunity]:
    """Nsight Compute rule results that carry a *global* speed-up estimate, as opportunities.

    ncu states the estimate as the share of the kernel's runtime that could be saved (``r`` %),
    the same kind of figure as ours; as a gain that is 1/(1 − r) − 1. It is one input, not
    ranked blindly: the share is capped by the stage's headroom (1 − T_sol/T) like every other
    estimate, and on a tie our own cause ranks first. Rules about a cause kprof models itself
    (tail effect, occupancy: :func:`rule_cause`) are not ranked twice: ours stands, ncu's figure
    stays in the report's rule table; nor are rules whose fix is not a kernel change
    (:func:`rule_not_ranked`). Local estimates (a speed-up of one part of the kernel) and
    rules without an estimate stay in the report but are not ranked. The caller passes as
    ``headroom`` what kprof's specific causes leave unexplained: ncu's causes are credited like
    generic advice.
    """
    cap = METRICS_ONLY_MAX_SHARE if headroom is None else headroom
    out = []
    seen = set()
    for r in rules:
        key = (r.get("section"), r.get("rule"), r.get("title"))
        if key in seen:  # the same rule fired on each kernel of a stage: ranked once
            continue
        seen.add(key)
        pct = r.get("speedup_pct")
        if r.get("type") != "OPTIMIZATION" or pct is None or r.get("speedup_type") != "global" or pct <= 0:
            continue
        if rule_not_ranked(r) is not None:
            continue
        reduction = min(pct / 100.0, cap)
        if reduction < MIN_SHARE:
            continue
        focus = r.get("focus_metrics") or []
        facts = {
            "section": r.get("section"),
            "rule": r.get("rule"),
            "title": r.get("title") or r.get("name") or r.get("rule"),
            "focus": (focus[0]["name"], float(focus[0]["value"]))
            if focus and focus[0].get("value") is not None
            else None,
            "speedup_pct": pct,
        }
        out.append(Opportunity("ncu", gain_pct(reduction), reduction, False, Facts(**facts)))
    out.sort(key=lambda o: o.est_gain_pct, reverse=True)
    return out
