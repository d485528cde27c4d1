"""``measure_noise``' and ``kprof noise``'s text and structured output, from a
:class:`~kprof_mcp.noise.NoiseOutcome` (times in ns there, scaled to µs here)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..analysis.noise import Judgement
from .markdown import table


def judgement_words(j: Judgement) -> str:
    """What a baseline verdict used, worded: the floor, the CI, or the spread standing in for the floor."""
    if j.verdict == "n/a":
        return "no time"
    if j.verdict == "unknown":
        return "no noise floor measured on this GPU and no samples for a CI: run kprof noise, or compare_versions"
    used = []
    if j.floor_pct is not None:
        used.append(f"noise floor {j.floor_pct:.2f} %")
    if j.ci is not None:
        used.append(f"95 % CI {j.ci[0]:.3f}–{j.ci[1]:.3f}")
    if j.floor_pct is None and j.spread_pct is not None:
        used.append(
            f"no noise floor measured on this GPU (kprof noise): the profiles' own spread (IQR/median up to "
            f"{j.spread_pct:.2f} %) stands in for it"
        )
    elif j.floor_pct is None:
        used.append(
            "no noise floor measured on this GPU (kprof noise): the CI alone understates the between-profile "
            "spread"
        )
    if j.verdict == "no significant change" and j.inside_guard:
        inside = "the floor" if j.floor_pct is not None else "the profiles' spread"
        used.append(f"a change inside {inside}: compare_versions (interleaved in one process) can resolve it")
    return "; ".join(used)


class NoiseCase(BaseModel):
    """One case of ``measure_noise``'s input."""

    kernel: str = Field(description="kernel package name (list_kernels)")
    version: str = Field(description="its version, e.g. 'v3'")
    params: dict = Field(default_factory=dict, description="kernel parameters (defaults if omitted)")


class NoiseSeries(BaseModel):
    kernel: str
    version: str
    params: dict = Field(default_factory=dict)
    clock: str = Field(description="'locked' (SM clock locked while timed) or 'free'")
    bound: str | None = Field(
        default=None,
        description="'compute' or 'memory' by the FLOP/byte model; the floor "
        "of a stage comes from series of its own class",
    )
    profiles: int
    median_us: float
    range_pct: float | None = Field(
        default=None,
        description="(max - min) / median of the profiles' times: the floor a change must exceed",
    )
    rel_sd_pct: float | None = None
    times_us: list[float] = Field(default_factory=list)


class NoiseSummary(BaseModel):
    status: str = Field(
        default="done", description="'done', or 'queued'/'running' (call get_profile(job_id))"
    )
    job_id: str | None = None
    device: str | None = None
    rounds: int = 0
    series: list[NoiseSeries] = Field(default_factory=list)
    stored: str | None = Field(
        default=None, description="where the floor is kept (per GPU model, in kprof's cache)"
    )


def noise_summary(outcome, **fields) -> NoiseSummary:
    series = [
        NoiseSeries(
            kernel=e["kernel"],
            version=e["version"],
            params=e.get("params") or {},
            clock=e["clock"],
            bound=e.get("bound"),
            profiles=e["profiles"],
            median_us=round(e["median_ns"] / 1e3, 3),
            range_pct=None if e.get("range_pct") is None else round(e["range_pct"], 3),
            rel_sd_pct=None if e.get("rel_sd_pct") is None else round(e["rel_sd_pct"], 3),
            times_us=[round(t / 1e3, 3) for t in e.get("times_ns", [])],
        )
        for e in outcome.series
    ]
    return NoiseSummary(
        device=outcome.device, rounds=outcome.rounds, series=series, stored=outcome.stored, **fields
    )


def noise_markdown(outcome) -> str:
    """The floor as a table, and what a later profile does with it."""
    s = noise_summary(outcome)
    rows = [
        [
            f"{e.kernel} {e.version}" + (f" {e.params}" if e.params else ""),
            e.bound or "?",
            e.clock,
            f"{e.median_us:.3f}",
            "n/a" if e.range_pct is None else f"{e.range_pct:.2f} %",
            "n/a" if e.rel_sd_pct is None else f"{e.rel_sd_pct:.2f} %",
        ]
        for e in s.series
    ]
    out = [
        f"Noise floor on {s.device or 'this machine'} ({s.rounds} alternating event profiles of each case):",
        "",
    ]
    out += table(["Case", "Bound", "Clock", "Median (µs)", "(max − min) ÷ median", "SD"], rows)
    out += [
        "",
        f"Stored in {s.stored}. Every later profile on this GPU model carries the floor of its time scale and "
        "class (compute- or memory-bound); its vs-Baseline verdict calls a change only beyond it. Changes "
        "inside the floor: compare_versions (interleaved in one process).",
    ]
    return "\n".join(out)
