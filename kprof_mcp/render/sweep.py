"""A sweep's rows (:func:`sweep_rows`: its assessed points scaled, the top opportunity worded), its
markdown (sweep.md) and structured output."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..analysis.sweep import sweep_points
from ..models import SweepResult
from .diagnosis import words
from .markdown import num, table


def sweep_rows(r: SweepResult) -> list[dict[str, Any]]:
    """One row per (parameter value, version): time (µs), TFLOP/s and GB/s from the FLOP/byte models,
    % of the roofline, the bottleneck and the top opportunity
    (:func:`kprof_mcp.analysis.sweep.sweep_points`)."""
    return [
        {
            r.param: p.point.params.get(r.param),
            "version": p.point.version,
            "time_us": p.time_ns / 1e3,
            "rel_iqr_pct": 100.0 * p.rel_iqr,
            "tflops": p.flops_per_s / 1e12,
            "gbps": p.bytes_per_s / 1e9,
            "pct_roofline": p.pct_roofline,
            "bottleneck": p.bottleneck,
            "top_opportunity": words(p.top.opportunity)[0] if p.top else None,
            "top_gain_pct": p.top.est_gain_pct if p.top else None,
            "timing_method": p.point.stages[0].timing.method,
        }
        for p in sweep_points(r)
    ]


class SweepSummary(BaseModel):
    status: str = Field(
        default="done", description="'done', or 'queued'/'running' (call get_profile(job_id))"
    )
    job_id: str | None = None
    kernel: str | None = None
    param: str | None = None
    device: str | None = None
    rows: list[dict[str, Any]] = Field(
        default_factory=list,
        description="one per (value, version): time_us, "
        "tflops, gbps, pct_roofline, bottleneck, top_opportunity, top_gain_pct",
    )
    skipped: list[dict[str, Any]] = Field(default_factory=list)
    sweep_dir: str | None = Field(default=None, description="sweep.csv, sweep.png, sweep.md, sweep.json")
    warnings: list[str] = Field(default_factory=list)


def sweep_summary(r: SweepResult, rows: list[dict[str, Any]], **fields: Any) -> SweepSummary:
    return SweepSummary(
        kernel=r.kernel,
        param=r.param,
        device=r.device.name,
        rows=rows,
        skipped=r.skipped,
        sweep_dir=r.sweep_dir,
        warnings=[f"{w.kind}: {w.message}" for w in r.warnings],
        **fields,
    )


def render_sweep(r: SweepResult, rows: list[dict[str, Any]]) -> str:
    fixed = {k: v for k, v in (r.points[0].params if r.points else {}).items() if k != r.param}
    out = [
        f"## Sweep: {r.kernel} {', '.join(r.versions)} over {r.param}",
        "",
        "Fixed: " + ", ".join(f"{k}={v}" for k, v in fixed.items()) + f". Device: {r.device.name}.",
        "",
    ]
    out += table(
        [
            r.param,
            "Version",
            "Time (us)",
            "IQR/median %",
            "TFLOP/s",
            "GB/s",
            "% of roofline",
            "Bottleneck",
            "Top opportunity",
        ],
        [
            [
                x[r.param],
                x["version"],
                f"{x['time_us']:.3f}",
                f"{x['rel_iqr_pct']:.2f}",
                f"{x['tflops']:.3f}",
                f"{x['gbps']:.1f}",
                num(x["pct_roofline"]),
                x["bottleneck"] or "n/a",
                f"{x['top_opportunity']} (est. {x['top_gain_pct']:.1f}%)" if x["top_opportunity"] else "—",
            ]
            for x in rows
        ],
    )
    if r.skipped:
        out += ["", "Skipped:"] + [
            f"- {r.param}={s['value']} {s['version']}: {s['reason']}" for s in r.skipped
        ]
    out += [
        "",
        f"Each point timed as event mode times a stage ({rows[0]['timing_method'] if rows else 'n/a'}; "
        "L2 flushed on a GPU) on a short budget; the bottleneck and opportunity are those a profile of the "
        "point would give. Files: `sweep.csv`, `sweep.png`, `sweep.json`.",
    ]
    if r.warnings:
        out += ["", "Warnings:"] + [f"- [{w.kind}] {w.message}" for w in r.warnings]
    return "\n".join(out) + "\n"
