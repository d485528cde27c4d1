"""``compare_versions``' markdown (compare.md) and its structured output, from a
:class:`~kprof_mcp.models.CompareResult`; and the counter table of its Nsight profiles
(:func:`counter_table`: each stage's counters side by side, scaled, with each change worded)."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from pydantic import BaseModel, Field

from ..analysis.compare import Ratio
from ..models import CompareResult, Comparison, CounterRow, ProfileResult
from .diagnosis import assess
from .markdown import table


class VersionSummary(BaseModel):
    version: str
    median_us: float
    rel_iqr_pct: float
    runs: int
    method: str = Field(description="cupti_kernel_sum (kernels' own time), cupti_span, or cpu_wall_clock")


class CompareSummary(BaseModel):
    status: str = Field(
        default="done", description="'done', or 'queued'/'running' (call get_profile(job_id))"
    )
    job_id: str | None = None
    kernel: str | None = None
    params: dict = Field(default_factory=dict)
    device: str | None = None
    versions: list[VersionSummary] = Field(default_factory=list)
    comparisons: list[Comparison] = Field(
        default_factory=list,
        description="each version against the first: "
        "speedup = baseline median / version median, 95 % bootstrap CI, verdict",
    )
    rounds: int = 0
    runs_per_round: int = 0
    compare_dir: str | None = None
    warnings: list[str] = Field(default_factory=list)
    counter_mode: str | None = Field(
        default=None, description="the Nsight mode each version was also profiled in"
    )
    counters: list[CounterRow] = Field(
        default_factory=list,
        description="Nsight modes: each stage's counters for "
        "every version side by side, with the change against the first",
    )
    profiles: dict[str, str] = Field(
        default_factory=dict, description="each version's profile_dir (Nsight modes)"
    )


def compare_summary(r: CompareResult, **fields) -> CompareSummary:
    return CompareSummary(
        kernel=r.kernel,
        params=r.params,
        device=r.device.name,
        versions=[
            VersionSummary(
                version=t.version,
                median_us=t.median_ns / 1e3,
                rel_iqr_pct=100 * t.rel_iqr,
                runs=t.runs,
                method=t.method,
            )
            for t in r.versions
        ],
        comparisons=r.comparisons,
        rounds=r.rounds,
        runs_per_round=r.runs_per_round,
        compare_dir=r.compare_dir,
        warnings=[f"{w.kind}: {w.message}" for w in r.warnings],
        counter_mode=r.counter_mode,
        counters=r.counters,
        profiles=r.profiles,
        **fields,
    )


def comparison(r: Ratio, device_kind: str = "cuda", refused: str | None = None) -> Comparison:
    """A comparison's numbers with its verdict worded: the speed-up (or the slow-down, its interval
    turned into the same unit: 1/ratio reverses the bounds) and its confidence interval. ``refused``:
    why no verdict may be given (an arm failed its integrity checks after timing): the verdict is
    'refused' and the sentence says why. On the CPU the sentence is :func:`verdict_sentence`'s."""
    pct = f"{100 * r.confidence:.0f} % CI"
    if refused:
        sentence = (
            f"no verdict on {r.version} against {r.baseline} (speed-up {r.speedup:.3f} as timed): {refused}"
        )
        c = Comparison(**dict(dataclasses.asdict(r), verdict="refused"), sentence=sentence)
        return c.model_copy(update={"sentence": verdict_sentence(c, device_kind)})
    if r.verdict == "faster":
        sentence = (
            f"{r.version} is {r.speedup:.3f}× faster than {r.baseline} ({pct} {r.ci_low:.3f}–{r.ci_high:.3f})"
        )
    elif r.verdict == "slower":
        sentence = (
            f"{r.version} is {1 / r.speedup:.3f}× slower than {r.baseline} "
            f"({pct} {1 / r.ci_high:.3f}–{1 / r.ci_low:.3f}× slower)"
        )
    else:
        sentence = (
            f"no significant difference between {r.version} and {r.baseline} "
            f"(speed-up {r.speedup:.3f}, {pct} {r.ci_low:.3f}–{r.ci_high:.3f})"
        )
    c = Comparison(**dataclasses.asdict(r), sentence=sentence)
    return c.model_copy(update={"sentence": verdict_sentence(c, device_kind)})


def verdict_sentence(c: Comparison, device_kind: str) -> str:
    """A comparison's verdict as a reader should take it: on a GPU the child's sentence; on the
    CPU prefixed "CPU:" with the figure labelled a CPU wall time, since a CPU ratio says nothing
    about the versions on a GPU (once: a sentence worded on the CPU already is)."""
    if device_kind == "cuda" or c.sentence.startswith("CPU: "):
        return c.sentence
    return f"CPU: {c.sentence}: CPU wall time, not a GPU figure"


def render_compare(r: CompareResult) -> str:
    base = r.versions[0]
    out = [f"## Compare: {r.kernel} {' vs '.join(t.version for t in r.versions)}", ""]
    cols = r.param_order or list(r.params)
    if any(t.params for t in r.versions):  # one version (or more) at several parameter sets
        out += table(
            ["Version"] + cols,
            [[t.version] + [(t.params or r.params).get(c) for c in cols] for t in r.versions],
        )
    else:
        out += table(cols, [[r.params.get(c) for c in cols]])
    out += ["", "### Verdict", ""]
    # Not bold: a CPU ratio is no verdict on GPU speed, and a refused one is none at all.
    out += [
        f"- **{c.sentence}**"
        if r.device.kind == "cuda" and c.verdict != "refused"
        else f"- {verdict_sentence(c, r.device.kind)}"
        for c in r.comparisons
    ]
    out += ["", "### Versions", ""]
    rows = []
    for t in r.versions:
        c = next((c for c in r.comparisons if c.version == t.version), None)
        rows.append(
            [
                t.version,
                f"{t.median_ns / 1e3:.3f}",
                f"{100 * t.rel_iqr:.2f}",
                t.runs,
                "baseline"
                if t is base
                else f"{c.speedup:.3f}" + (" (refused)" if c.verdict == "refused" else "")
                if c
                else "",
                "" if t is base else f"{c.ci_low:.3f}–{c.ci_high:.3f}" if c else "",
            ]
        )
    out += table(
        ["Version", "Median (us)", "IQR/median %", "Runs", f"Speed-up vs {base.version}", "95 % CI"], rows
    )
    if any(t.energy_mj_per_run for t in r.versions):
        from .report import energy_range

        out += [
            "",
            "Energy (NVML's energy counter; 0.6 s windows of runs back to back, versions alternating; "
            "median [min–max]):",
            "",
        ]
        out += table(
            ["Version", "Energy per run (mJ)", "Mean power (W)"],
            [
                [t.version, energy_range(t.energy_mj_per_run, 3), energy_range(t.power_w, 0)]
                for t in r.versions
            ],
        )
    clocks = sorted({m for t in r.versions for m in t.sm_clock_mhz})
    out += [
        "",
        f"{r.rounds} rounds × {r.runs_per_round} runs of each version, {r.order}; all versions in one "
        f"process on the same inputs; time: {base.method}; cache: {r.cache_control}; device: {r.device.name}"
        + (f"; SM clock {clocks[0]:.0f}–{clocks[-1]:.0f} MHz" if clocks else "")
        + ". The CI is a "
        "two-stage bootstrap (rounds, then runs within them) of the ratio of medians. "
        "Raw samples: `samples.csv`.",
    ]
    if r.counters:
        out += ["", f"### Counters ({r.counter_mode} mode)", ""] + _counters(r)
    if r.warnings:
        out += ["", "Warnings:"] + [f"- [{w.kind}] {w.message}" for w in r.warnings]
    return "\n".join(out) + "\n"


def _fmt(v: float | str | None) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, str):
        return v
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def _counters(r: CompareResult) -> list[str]:
    """Each stage's counters for every version side by side, and each one's change against the
    first; the profiles behind them are linked below the table."""
    labels = [t.version for t in r.versions]
    base = labels[0]
    head = ["Stage", "Measurement"] + labels + [f"{v} vs {base}" for v in labels[1:]]
    rows = [
        [row.stage, row.label] + [_fmt(v) for v in row.values] + [c or "" for c in row.changes[1:]]
        for row in r.counters
    ]
    out = table(head, rows)
    out += [
        "",
        f"Each version profiled separately in {r.counter_mode} mode after the timing (Nsight Compute: "
        "clocks locked to base, caches flushed; its durations are not comparable with the CUPTI times "
        "above). Profiles: " + "; ".join(f"{k}: `{v}`" for k, v in r.profiles.items()) + ".",
    ]
    return out


# (StageResult field or derived key, label, kind) — kind: "pct" changes in points, "ratio" as a
# factor, "text" as same/changed. In the order a kernel engineer reads a Nsight Compute page.
COUNTER_METRICS: tuple[tuple[str, str, str], ...] = (
    ("duration_us", "duration (us, ncu)", "ratio"),
    ("sm_clock_mhz", "SM clock (MHz)", "ratio"),
    ("tc_pct", "tensor pipe (% of peak)", "pct"),
    ("sm_pct", "SM throughput (% of peak)", "pct"),
    ("dram_pct", "DRAM throughput (% of peak)", "pct"),
    ("l2_hit_pct", "L2 hit rate (%)", "pct"),
    ("occupancy_pct", "achieved occupancy (%)", "pct"),
    ("theoretical_occupancy_pct", "theoretical occupancy (%)", "pct"),
    ("registers_per_thread", "registers/thread", "ratio"),
    ("shared_kib", "shared memory/block (KiB)", "ratio"),
    ("measured_waves_per_sm", "waves/SM", "ratio"),
    ("dram_mb", "DRAM bytes (MB)", "ratio"),
    ("over_fetch_ratio", "DRAM bytes ÷ model bytes", "ratio"),
    ("spill_mb", "local (spill) bytes (MB)", "ratio"),
    ("bottleneck", "bottleneck", "text"),
    ("top_opportunity", "top opportunity", "text"),
    ("top_gain_pct", "its estimated gain in the stage (%)", "pct"),
)


def _stage_values(result: ProfileResult) -> dict[str, dict[str, float | str | None]]:
    """Per stage name, every COUNTER_METRICS value of one profile (None: not measured)."""
    a = assess(result)
    out: dict[str, dict[str, float | str | None]] = {}
    for sa in a.stages:
        s = sa.stage
        mb = lambda v: None if v is None else v / 1e6
        top = next((o for o in a.opportunities if o.stage == s.name), None)
        out[s.name] = {
            "duration_us": s.timing.median_ns / 1e3,
            "sm_clock_mhz": None if s.sm_clock_hz is None else s.sm_clock_hz / 1e6,
            "tc_pct": s.tc_pct,
            "sm_pct": s.sm_pct,
            "dram_pct": s.dram_pct,
            "l2_hit_pct": s.l2_hit_pct,
            "occupancy_pct": s.occupancy_pct,
            "theoretical_occupancy_pct": s.theoretical_occupancy_pct,
            "registers_per_thread": s.registers_per_thread,
            "shared_kib": None
            if s.shared_mem_per_block_bytes is None
            else s.shared_mem_per_block_bytes / 1024,
            "measured_waves_per_sm": s.measured_waves_per_sm,
            "dram_mb": mb(s.dram_bytes),
            "over_fetch_ratio": s.over_fetch_ratio,
            "spill_mb": mb(s.measured_local_bytes),
            "bottleneck": sa.diagnosis.bottleneck if sa.diagnosis else None,
            "top_opportunity": top.name if top else "none",
            "top_gain_pct": top.stage_gain_pct if top else None,
        }
    return out


def _change(kind: str, base: float | str | None, value: float | str | None) -> str | None:
    if base is None or value is None:
        return None
    if kind == "text":
        return "same" if base == value else "changed"
    if kind == "pct":
        return f"{value - base:+.1f} pts"
    if base == 0:
        return "same" if value == 0 else f"+{value:.3g}"
    return f"×{value / base:.2f}"


def counter_table(results: Sequence[ProfileResult]) -> list[CounterRow]:
    """The counters of each profile side by side, stage by stage (stages matched by name, in
    the order they first appear), with each one's change against the first. Rows where no
    profile measured the metric are left out."""
    per = [_stage_values(r) for r in results]
    stages: list[str] = []
    for p in per:
        stages += [n for n in p if n not in stages]
    rows: list[CounterRow] = []
    for st in stages:
        for key, label, kind in COUNTER_METRICS:
            vals = [p.get(st, {}).get(key) for p in per]
            if all(v is None for v in vals):
                continue
            rows.append(
                CounterRow(
                    stage=st,
                    metric=key,
                    label=label,
                    values=vals,
                    changes=[None] + [_change(kind, vals[0], v) for v in vals[1:]],
                )
            )
    return rows
