"""``compare_versions``' markdown (compare.md) and its structured output, from a
:class:`~kprof_mcp.models.CompareResult`."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..models import Comparison, CompareResult
from .markdown import table


class VersionSummary(BaseModel):
    version: str
    median_us: float
    rel_iqr_pct: float
    runs: int
    method: str = Field(description="cupti_kernel_sum (kernels' own time), cupti_span, or cpu_wall_clock")


class CompareSummary(BaseModel):
    status: str = Field(default="done", description="'done', or 'queued'/'running' (call get_profile(job_id))")
    job_id: str | None = None
    kernel: str | None = None
    params: dict = Field(default_factory=dict)
    device: str | None = None
    versions: list[VersionSummary] = Field(default_factory=list)
    comparisons: list[Comparison] = Field(default_factory=list, description="each version against the first: "
                                          "speedup = baseline median / version median, 95 % bootstrap CI, verdict")
    rounds: int = 0
    runs_per_round: int = 0
    compare_dir: str | None = None
    warnings: list[str] = Field(default_factory=list)


def compare_summary(r: CompareResult, **fields) -> CompareSummary:
    return CompareSummary(kernel=r.kernel, params=r.params, device=r.device.name,
                          versions=[VersionSummary(version=t.version, median_us=t.median_ns / 1e3,
                                                   rel_iqr_pct=100 * t.rel_iqr, runs=t.runs, method=t.method)
                                    for t in r.versions],
                          comparisons=r.comparisons, rounds=r.rounds, runs_per_round=r.runs_per_round,
                          compare_dir=r.compare_dir, warnings=[f"{w.kind}: {w.message}" for w in r.warnings], **fields)


def render_compare(r: CompareResult) -> str:
    base = r.versions[0]
    out = [f"## Compare: {r.kernel} {' vs '.join(t.version for t in r.versions)}", ""]
    cols = r.param_order or list(r.params)
    out += table(cols, [[r.params.get(c) for c in cols]])
    out += ["", "### Verdict", ""]
    out += [f"- **{c.sentence}**" for c in r.comparisons]
    out += ["", "### Versions", ""]
    rows = []
    for t in r.versions:
        c = next((c for c in r.comparisons if c.version == t.version), None)
        rows.append([t.version, f"{t.median_ns / 1e3:.3f}", f"{100 * t.rel_iqr:.2f}", t.runs,
                     "baseline" if t is base else f"{c.speedup:.3f}" if c else "",
                     "" if t is base else f"{c.ci_low:.3f}–{c.ci_high:.3f}" if c else ""])
    out += table(["Version", "Median (us)", "IQR/median %", "Runs", f"Speed-up vs {base.version}", "95 % CI"], rows)
    clocks = sorted({m for t in r.versions for m in t.sm_clock_mhz})
    out += ["", f"{r.rounds} rounds × {r.runs_per_round} runs of each version, {r.order}; all versions in one "
                f"process on the same inputs; time: {base.method}; cache: {r.cache_control}; device: {r.device.name}"
                + (f"; SM clock {clocks[0]:.0f}–{clocks[-1]:.0f} MHz" if clocks else "") + ". The CI is a "
                "two-stage bootstrap (rounds, then runs within them) of the ratio of medians. "
                "Raw samples: `samples.csv`."]
    if r.warnings:
        out += ["", "Warnings:"] + [f"- [{w.kind}] {w.message}" for w in r.warnings]
    return "\n".join(out) + "\n"
