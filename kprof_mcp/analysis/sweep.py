"""A sweep's table: one row per (parameter value, version), each point assessed like any
profile (:func:`kprof_mcp.analysis.assessment.assess`), so a sweep's bottleneck column says what
the profile of that point would say."""

from __future__ import annotations

from typing import Any

from ..models import SweepResult
from .assessment import assess


def sweep_rows(r: SweepResult) -> list[dict[str, Any]]:
    """Per point: time (sum of stage medians, or the plan's), TFLOP/s and GB/s from the FLOP/byte
    models, % of the roofline (achieved FLOP/s over the attainable min(peak, intensity × peak
    bandwidth), or achieved bandwidth over peak for kernels without FLOPs), the bottleneck and
    the top opportunity."""
    rows = []
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
        top = a.opportunities[0] if a.opportunities else None
        rows.append(
            {
                r.param: p.params.get(r.param),
                "version": p.version,
                "time_us": t_ns / 1e3,
                "rel_iqr_pct": 100.0 * max(s.timing.rel_iqr for s in p.stages),
                "tflops": f_s / 1e12,
                "gbps": b_s / 1e9,
                "pct_roofline": pct,
                "bottleneck": a.bottleneck,
                "top_opportunity": top.name if top else None,
                "top_gain_pct": top.est_gain_pct if top else None,
                "timing_method": p.stages[0].timing.method,
            }
        )
    return rows
