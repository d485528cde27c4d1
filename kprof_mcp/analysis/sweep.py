"""A sweep's points, each assessed like any profile (:func:`kprof_mcp.analysis.assessment.assess`),
so a sweep's bottleneck column says what the profile of that point would say. Units as measured:
:func:`kprof_mcp.render.sweep.sweep_rows` scales them and words the top opportunity."""

from __future__ import annotations

from dataclasses import dataclass

from ..models import ProfileResult, SweepResult
from .assessment import RankedOpportunity, assess


@dataclass(frozen=True)
class SweepPoint:
    point: ProfileResult
    time_ns: float  # sum of stage medians, or the plan's
    flops_per_s: float  # from the FLOP/byte models
    bytes_per_s: float
    pct_roofline: float | None  # achieved over attainable FLOP/s (or over peak bandwidth without FLOPs)
    rel_iqr: float  # the largest of its stages'
    bottleneck: str | None
    top: RankedOpportunity | None


def sweep_points(r: SweepResult) -> list[SweepPoint]:
    """Per point: time, FLOP/s and bytes/s from the FLOP/byte models, % of the roofline (achieved
    FLOP/s over the attainable min(peak, intensity × peak bandwidth), or achieved bandwidth over peak
    for kernels without FLOPs), the bottleneck and the top opportunity."""
    out = []
    for p in r.points:
        a = assess(p)
        t_ns = a.total_time_ns
        flops, nbytes = a.flops, a.bytes_model
        peak_f = max((s.peak_flops_per_s or 0.0 for s in p.stages), default=0.0) or None
        peak_b = max((s.peak_bytes_per_s or 0.0 for s in p.stages), default=0.0) or None
        f_s = flops / (t_ns * 1e-9) if t_ns > 0 else 0.0
        b_s = nbytes / (t_ns * 1e-9) if t_ns > 0 else 0.0
        pct = None
        if peak_b:
            if flops > 0 and nbytes > 0 and peak_f:
                attainable = min(peak_f, flops / nbytes * peak_b)
                pct = 100.0 * f_s / attainable
            else:
                pct = 100.0 * b_s / peak_b
        out.append(
            SweepPoint(
                p,
                t_ns,
                f_s,
                b_s,
                pct,
                max(s.timing.rel_iqr for s in p.stages),
                a.bottleneck,
                a.opportunities[0] if a.opportunities else None,
            )
        )
    return out
